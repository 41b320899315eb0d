package dev.relock.cli.demo;

import dev.relock.cli.Main;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;

/**
 * {@code relock args...} run in this JVM through {@link Main#run}, with System.out and System.err
 * captured: for the quick cases that start no worker (usage errors, help).
 *
 * @param exitCode what Main.run returned
 */
public record InProcess(int exitCode, String out, String err) {

    public static synchronized InProcess run(String... args) {
        PrintStream originalOut = System.out;
        PrintStream originalErr = System.err;
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        try {
            System.setOut(new PrintStream(out, true, StandardCharsets.UTF_8));
            System.setErr(new PrintStream(err, true, StandardCharsets.UTF_8));
            int exitCode = Main.run(args);
            return new InProcess(exitCode, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
        } finally {
            System.setOut(originalOut);
            System.setErr(originalErr);
        }
    }
}
