package dev.relock.testredis;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/** What Linux's /proc says about a pid, independent of who its parent is (orphans are not our children). */
final class ProcFs {

    private ProcFs() {
    }

    /** True if {@code pid} exists and is not a zombie (a dead process nobody reaped yet counts as dead). */
    static boolean isAlive(long pid) {
        String stat;
        try {
            stat = Files.readString(Path.of("/proc", String.valueOf(pid), "stat"), StandardCharsets.UTF_8);
        } catch (IOException gone) {
            return false;
        }
        char state = stat.charAt(stat.lastIndexOf(')') + 2);
        return state != 'Z' && state != 'X';
    }
}
