package dev.relock.bench;

import java.time.LocalTime;
import java.time.format.DateTimeFormatter;

/** Progress lines on standard output, with the time of day. */
final class Progress {

    private static final DateTimeFormatter TIME = DateTimeFormatter.ofPattern("HH:mm:ss");

    static void say(String format, Object... args) {
        System.out.println(LocalTime.now().format(TIME) + " " + String.format(format, args));
        System.out.flush();
    }

    private Progress() {
    }
}
