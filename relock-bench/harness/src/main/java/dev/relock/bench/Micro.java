package dev.relock.bench;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import org.openjdk.jmh.profile.GCProfiler;
import org.openjdk.jmh.results.Result;
import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.options.Options;
import org.openjdk.jmh.runner.options.OptionsBuilder;
import org.openjdk.jmh.runner.options.TimeValue;
import org.openjdk.jmh.runner.options.VerboseMode;

/** Runs {@link HotPathBenchmark} with JMH's GC profiler in a forked JVM and collects its figures. */
final class Micro {

    /** One benchmark: throughput and allocation per operation. */
    record Figure(String benchmark, double opsPerSecond, double opsError, double bytesPerOp) {}

    static List<Figure> run(String redisUri, boolean quick, Path log) throws Exception {
        Options options = new OptionsBuilder()
                .include(HotPathBenchmark.class.getName() + "\\.")
                .forks(1)
                .warmupIterations(quick ? 1 : 2)
                .warmupTime(TimeValue.seconds(1))
                .measurementIterations(quick ? 2 : 3)
                .measurementTime(TimeValue.seconds(quick ? 1 : 2))
                .threads(1)
                .addProfiler(GCProfiler.class)
                .jvmArgsAppend("-D" + HotPathBenchmark.REDIS_PROPERTY + "=" + redisUri, "-Xmx512m",
                        "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn")
                .verbosity(VerboseMode.NORMAL)
                .output(log.toString())
                .shouldFailOnError(true)
                .build();
        Collection<RunResult> results = new Runner(options).run();
        List<Figure> figures = new ArrayList<>();
        for (RunResult result : results) {
            String name = result.getParams().getBenchmark();
            name = name.substring(name.lastIndexOf('.') + 1);
            Result<?> primary = result.getPrimaryResult();
            Result<?> alloc = result.getSecondaryResults().get("gc.alloc.rate.norm");
            figures.add(new Figure(name, primary.getScore(), primary.getScoreError(),
                    alloc == null ? Double.NaN : alloc.getScore()));
        }
        return figures;
    }

    private Micro() {
    }
}
