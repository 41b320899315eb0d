package dev.relock;

import java.util.Optional;

/**
 * Who is behind one owner id of {@link LockInfo#holders()}, as the holding client registered itself: its
 * {@link ClientIdentity} and the name of the thread that asked for the hold.
 *
 * @param owner the owner id ({@code <client id>:<thread id>} or {@code <client id>:h<n>})
 * @param client the holding client's identity; empty when its record is gone (the client closed or crashed, its
 *     record expired) or was never written (a client of a relock version without identities)
 * @param thread the name of the thread that asked for the hold; {@code ""} when not known (the client adds it to its
 *     record within a round trip or so of the acquisition, or within 100 ms when many owner ids begin to hold one
 *     after the other, so a hold younger than that may not be in it yet; an unnamed virtual thread has none)
 */
public record HolderIdentity(String owner, Optional<ClientIdentity> client, String thread) {

    /**
     * One line for people: {@code billing on host-17 (pid 4242, label blue), thread worker-3}, or
     * {@code client 3f9a1c2e… (no identity record)}.
     */
    public String describe() {
        StringBuilder line = new StringBuilder();
        if (client.isPresent()) {
            ClientIdentity id = client.get();
            line.append(id.application().isEmpty() ? "an application" : id.application()).append(" on ")
                    .append(id.host()).append(" (pid ").append(id.pid());
            if (!id.label().isEmpty()) {
                line.append(", label ").append(id.label());
            }
            line.append(')');
        } else {
            int colon = owner.indexOf(':');
            line.append("client ").append(colon < 0 ? owner : owner.substring(0, colon)).append(" (no identity record)");
        }
        if (!thread.isEmpty()) {
            line.append(", thread ").append(thread);
        }
        return line.toString();
    }
}
