package dev.relock.cli;

import java.time.Duration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.TypeConversionException;

/**
 * Reads durations as people write them: {@code 500ms}, {@code 2s}, {@code 1m}, {@code 1h}, also
 * {@code 1.5s}; a bare number is seconds, as flock's {@code -w 5} is ({@code 5}, {@code 0.5}, {@code 0}).
 * Negative values are refused.
 */
public final class DurationConverter implements ITypeConverter<Duration> {

    private static final Pattern FORMAT = Pattern.compile("(\\d+(?:\\.\\d+)?)(ms|s|m|h|d)?");

    @Override
    public Duration convert(String text) {
        String value = text.trim();
        Matcher matcher = FORMAT.matcher(value);
        if (!matcher.matches()) {
            throw new TypeConversionException(
                    "'" + text + "' is not a duration; write it like 500ms, 2s, 1m, 1h or 5 (seconds), not negative");
        }
        double amount = Double.parseDouble(matcher.group(1));
        String unit = matcher.group(2) == null ? "s" : matcher.group(2);
        double millis = switch (unit) {
            case "ms" -> amount;
            case "s" -> amount * 1_000;
            case "m" -> amount * 60_000;
            case "h" -> amount * 3_600_000;
            default -> amount * 86_400_000;
        };
        return Duration.ofNanos(Math.round(millis * 1_000_000));
    }
}
