package dev.relock.cli;

import java.time.Duration;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.OptionSpec;

/**
 * The top-level {@code relock} command; the work is in its subcommands.
 *
 * <p>Start-up: picocli builds a command's model by reflection when the command is added, which
 * costs a CLI run more than anything but connecting to Redis. A command line whose first word
 * names a subcommand gets only that one; anything else (help, no command, a typo) gets all.
 */
@Command(name = "relock",
        mixinStandardHelpOptions = true,
        versionProvider = VersionProvider.class,
        description = {"Distributed locks on Redis, from the shell.",
            "--redis, --prefix and --verbose may come before the command too: relock --redis URI list"},
        footerHeading = "%nExamples:%n",
        footer = {
            "  relock exec --wait 0 nightly-backup -- /usr/local/bin/backup",
            "  relock list",
            "  relock inspect nightly-backup",
            "  relock demo",
            "  relock help exec"
        })
public final class RelockCommand implements Runnable {

    /** The subcommands in the order help lists them. */
    private static final Map<String, Supplier<Object>> SUBCOMMANDS = new LinkedHashMap<>();

    static {
        SUBCOMMANDS.put("exec", ExecCommand::new);
        SUBCOMMANDS.put("list", ListCommand::new);
        SUBCOMMANDS.put("inspect", InspectCommand::new);
        SUBCOMMANDS.put("unlock", UnlockCommand::new);
        SUBCOMMANDS.put("demo", DemoCommand::new);
        SUBCOMMANDS.put("verify", VerifyCommand::new);
    }

    /**
     * The options of {@link ConnectionOptions} that every command has, as its annotations declare them: each name,
     * and whether it takes a value.
     */
    private static final Map<String, Boolean> SHARED_OPTIONS = new HashMap<>();
    /** Their model, from a throwaway instance: the hidden copies at the top level write into it. */
    private static final List<OptionSpec> SHARED_OPTION_SPECS =
            CommandLine.Model.CommandSpec.forAnnotatedObject(new ConnectionOptions()).options();

    static {
        for (OptionSpec option : SHARED_OPTION_SPECS) {
            for (String name : option.names()) {
                SHARED_OPTIONS.put(name, option.arity().max() > 0);
            }
        }
    }

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Override
    public void run() {
        throw new CommandLine.ParameterException(spec.commandLine(), "a command is required");
    }

    /**
     * The arguments with the command named first: the shared options ({@code --redis URI}, {@code --redis=URI},
     * {@code --prefix}, {@code --verbose}) given before a command's name move to just after it, where the command
     * reads them, so that {@code relock --redis URI list} means {@code relock list --redis URI}. Anything else is
     * returned as given, for picocli to run or to report.
     */
    public static String[] commandFirst(String... args) {
        int i = 0;
        while (i < args.length && !SUBCOMMANDS.containsKey(args[i])) {
            String name = args[i].contains("=") ? args[i].substring(0, args[i].indexOf('=')) : args[i];
            Boolean takesValue = SHARED_OPTIONS.get(name);
            if (takesValue == null) {
                return args;
            }
            i += takesValue && !args[i].contains("=") ? 2 : 1;
        }
        if (i == 0 || i >= args.length) {
            return args;
        }
        String[] ordered = new String[args.length];
        ordered[0] = args[i];
        System.arraycopy(args, 0, ordered, 1, i);
        System.arraycopy(args, i + 1, ordered, i + 1, args.length - i - 1);
        return ordered;
    }

    /** The configured command line with every subcommand. */
    public static CommandLine commandLine() {
        return commandLine(new String[0]);
    }

    /**
     * The configured command line for these arguments: usage errors exit 64, expected failures
     * print one line, and only the subcommand named first is built if there is one.
     */
    public static CommandLine commandLine(String... args) {
        CommandLine commandLine = new CommandLine(new RelockCommand());
        Supplier<Object> named = args.length > 0 ? SUBCOMMANDS.get(args[0]) : null;
        if (named != null) {
            commandLine.addSubcommand(args[0], named.get());
        } else {
            SUBCOMMANDS.forEach((name, command) -> commandLine.addSubcommand(name, command.get()));
            commandLine.addSubcommand("help", new CommandLine.HelpCommand());
        }
        for (CommandLine subcommand : commandLine.getSubcommands().values()) {
            if (subcommand.getCommandSpec().version().length == 0) {
                subcommand.getCommandSpec().version(commandLine.getCommandSpec().version());
            }
        }
        // the shared options given with no command after them (commandFirst moves them otherwise): accepted here,
        // hidden, so that the mistake reported is the missing command, not an option the help says may come first
        for (OptionSpec option : SHARED_OPTION_SPECS) {
            commandLine.getCommandSpec().addOption(OptionSpec.builder(option).hidden(true).build());
        }
        // after the subcommands: converters and settings reach only the commands present
        return commandLine
                .registerConverter(Duration.class, new DurationConverter())
                .setExpandAtFiles(false) // "@file" is an argument like any other, e.g. for COMMAND
                .setExitCodeExceptionMapper(Failures::exitCode)
                .setExecutionExceptionHandler(Failures::handle)
                .setParameterExceptionHandler(Failures::usage);
    }
}
