package dev.relock.testredis;

/**
 * Main class of the child JVM in {@link OrphanCleanupTest}: starts a server and never closes it.
 *
 * <p>Prints four lines (server pid, server directory, scratch directory, reaper pid), then with argument
 * {@code exit} exits at once, leaving the cleanup to the shutdown hook; with {@code block} it waits until its
 * standard input ends (so it also ends when the test JVM goes away) and is meant to be SIGKILLed.
 */
final class ServerInChildJvm {

    private ServerInChildJvm() {
    }

    public static void main(String[] args) throws Exception {
        RedisServer server = RedisServer.start();
        ProcessRegistry registry = ProcessRegistry.instance();
        System.out.println(server.pid());
        System.out.println(server.directory());
        System.out.println(registry.baseDirectory());
        System.out.println(registry.reaperPid());
        System.out.flush();
        if (args.length > 0 && args[0].equals("exit")) {
            System.exit(0);
        }
        while (System.in.read() >= 0) {
            // wait for end of input
        }
    }
}
