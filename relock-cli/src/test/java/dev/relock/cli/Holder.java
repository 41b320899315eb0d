package dev.relock.cli;

import static org.awaitility.Awaitility.await;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * A {@code relock exec NAME} in the background whose command reports its fencing token and then
 * holds the lock until the test lets it go: another process holding a lock, as in production.
 */
final class Holder implements AutoCloseable {

    private final Launcher.Running run;
    private final Path token;
    private final Path go;

    private Holder(Launcher.Running run, Path token, Path go) {
        this.run = run;
        this.token = token;
        this.go = go;
    }

    /** Starts {@code relock exec --redis URI [options] NAME} and waits until its command runs. */
    static Holder start(String redisUri, Path dir, String name, String... options) {
        Path files;
        try {
            files = Files.createTempDirectory(dir, "holder-");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        Path token = files.resolve("token");
        Path go = files.resolve("go");
        List<String> args = new ArrayList<>(List.of("exec", "--redis", redisUri));
        args.addAll(List.of(options));
        args.addAll(List.of(name, "--", "sh", "-c",
                // written whole, then renamed: the test never reads half a token
                "echo $RELOCK_FENCING_TOKEN > " + token + ".new && mv " + token + ".new " + token
                        + "; while [ ! -e " + go + " ]; do sleep 0.05; done"));
        Holder holder = new Holder(Launcher.start(args.toArray(String[]::new)), token, go);
        await().atMost(Duration.ofSeconds(60)).until(() -> Files.exists(token) || !holder.run.process().isAlive());
        if (!Files.exists(token)) {
            throw new AssertionError("the holder of '" + name + "' did not get the lock:\n"
                    + holder.run.await().describe());
        }
        return holder;
    }

    /** The fencing token its command got. */
    long token() {
        try {
            return Long.parseLong(Files.readString(token).trim());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    Launcher.Running running() {
        return run;
    }

    /** Lets the command end and waits for relock to exit. */
    Launcher.Result release() {
        letGo();
        return run.await();
    }

    private void letGo() {
        try {
            if (!Files.exists(go)) {
                Files.createFile(go);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Override
    public void close() {
        letGo();
        if (run.process().isAlive()) {
            run.await();
        }
    }
}
