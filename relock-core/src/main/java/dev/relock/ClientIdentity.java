package dev.relock;

import java.io.IOException;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Objects;

/**
 * Who a relock client is, for operators: the id in its owner ids, the host and process it runs in, and the
 * application name and label it was given ({@link RelockClientBuilder#applicationName},
 * {@link RelockClientBuilder#clientLabel}). relock names the Redis connections it opens after it
 * ({@link #connectionName()}, shown by {@code CLIENT LIST}); connections of a Lettuce client you pass keep your names.
 *
 * @param clientId the random 128-bit id (32 hex digits) that starts every owner id of the client
 * @param host this machine's host name, or {@code "unknown"}
 * @param pid this process's id
 * @param application the application's name, or {@code ""} when none was given
 * @param label a free label (an instance, a role), or {@code ""} when none was given
 */
public record ClientIdentity(String clientId, String host, long pid, String application, String label) {

    public ClientIdentity {
        Objects.requireNonNull(clientId, "clientId");
        Objects.requireNonNull(host, "host");
        Objects.requireNonNull(application, "application");
        Objects.requireNonNull(label, "label");
    }

    /**
     * The name relock gives its connections with {@code CLIENT SETNAME}:
     * {@code relock:<application or ->:<host>:<pid>:<first 8 digits of the client id>}, then {@code :<label>} if
     * there is one; characters other than letters, digits, {@code .}, {@code _} and {@code -} in the parts become
     * {@code _} (Redis allows no spaces in a connection name).
     */
    public String connectionName() {
        String name = "relock:" + (application.isEmpty() ? "-" : part(application)) + ":" + part(host) + ":" + pid
                + ":" + clientId.substring(0, Math.min(8, clientId.length()));
        return label.isEmpty() ? name : name + ":" + part(label);
    }

    /** This process's identity for a new client: its host and PID, and the given names ({@code null}: none). */
    static ClientIdentity of(String clientId, String application, String label) {
        return new ClientIdentity(clientId, localHost(), ProcessHandle.current().pid(),
                application == null ? "" : application, label == null ? "" : label);
    }

    private static String localHost() {
        return LocalHost.NAME;
    }

    /**
     * This machine's name, looked up once per JVM: from the environment or the kernel first, by DNS
     * ({@link InetAddress#getLocalHost}, which can take seconds where the name does not resolve) only if neither
     * says.
     */
    private static final class LocalHost {

        static final String NAME = lookUp();

        private static String lookUp() {
            for (String variable : new String[] {"HOSTNAME", "COMPUTERNAME"}) {
                String value = System.getenv(variable);
                if (value != null && !value.isBlank()) {
                    return value.strip();
                }
            }
            try {
                String kernel = Files.readString(Path.of("/proc/sys/kernel/hostname")).strip();
                if (!kernel.isEmpty()) {
                    return kernel;
                }
            } catch (IOException | RuntimeException e) {
                // not Linux: ask the resolver
            }
            try {
                return InetAddress.getLocalHost().getHostName();
            } catch (UnknownHostException | RuntimeException e) {
                return "unknown";
            }
        }
    }

    private static String part(String text) {
        StringBuilder part = new StringBuilder(Math.min(text.length(), 64));
        for (int i = 0; i < text.length() && part.length() < 64; i++) {
            char c = text.charAt(i);
            boolean kept = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
                    || c == '.' || c == '_' || c == '-';
            part.append(kept ? c : '_');
        }
        return part.toString();
    }
}
