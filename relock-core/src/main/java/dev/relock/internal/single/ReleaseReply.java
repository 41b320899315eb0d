package dev.relock.internal.single;

/**
 * The text reply of release.lua when the caller takes grants to its own client's waiters from it (its ARGV[6]):
 * {@code '<holds left>'}, or {@code '0 <owner> <fencing token> <attempt id>'} when the release granted the lock to a
 * waiting owner of the caller's own client.
 */
final class ReleaseReply {

    /** A grant on release to {@code owner}, in answer to its attempt {@code attempt}. */
    record Grant(String owner, long token, long attempt) {
    }

    private ReleaseReply() {
    }

    /** The owner's write holds left: 0 when released (granted or not), -1 when it held none. */
    static long holdsLeft(String reply) {
        int space = reply.indexOf(' ');
        return Long.parseLong(space < 0 ? reply : reply.substring(0, space));
    }

    /** The grant the reply carries, or null when it carries none. */
    static Grant grant(String reply) {
        int owner = reply.indexOf(' ');
        if (owner < 0) {
            return null;
        }
        int token = reply.indexOf(' ', owner + 1);
        int attempt = reply.indexOf(' ', token + 1);
        return new Grant(reply.substring(owner + 1, token), Long.parseLong(reply.substring(token + 1, attempt)),
                Long.parseLong(reply.substring(attempt + 1)));
    }
}
