package dev.relock.bench;

import java.util.ArrayList;
import java.util.List;
import org.HdrHistogram.Histogram;

/** The figures the scenarios produce, kept for the report. */
final class Results {

    /** One measured run of one subject. */
    static final class Run {
        double seconds;
        long ops;
        /** S1/S2: lock+unlock pair latency in ns. */
        Histogram latency;
        /** S3: release call to the next acquire's return in another thread, ns. */
        Histogram handoff;
        long[] perThread;
        long selfReacquired;
        long overlaps;
        long counter;
        /** How many unprotected increments were made: the counter must end equal to it. */
        long increments;
        /** S5: acquisitions of the write lock (the rest were reads). */
        long writes;
        double serverCpuSeconds;
        double clientCpuSeconds;
        /** Commands the (first) server ran during the run, scripts' own calls included (INFO commandstats). */
        long serverCalls;

        double opsPerSecond() {
            return ops / seconds;
        }

        /** min/max acquisitions per thread or client. */
        double fairness() {
            long min = Long.MAX_VALUE;
            long max = 0;
            for (long n : perThread) {
                min = Math.min(min, n);
                max = Math.max(max, n);
            }
            return max == 0 ? 0 : (double) min / max;
        }

        double selfShare() {
            return ops == 0 ? 0 : (double) selfReacquired / ops;
        }

        /** No two holders at once and no lost update of the unprotected counter. */
        boolean exclusive() {
            return overlaps == 0 && counter == increments;
        }
    }

    /** All runs of one subject in one scenario. */
    static final class SubjectRuns {
        final String label;
        final String family;
        final List<Run> runs = new ArrayList<>();
        String error;

        SubjectRuns(Subject subject) {
            this(subject, subject.label());
        }

        SubjectRuns(Subject subject, String label) {
            this.label = label;
            this.family = subject.family();
        }

        boolean ok() {
            return error == null && !runs.isEmpty();
        }

        List<Double> throughputs() {
            return runs.stream().map(Run::opsPerSecond).toList();
        }

        double median() {
            return Stats.median(throughputs());
        }

        double min() {
            return Stats.min(throughputs());
        }

        double max() {
            return Stats.max(throughputs());
        }

        List<Double> each(java.util.function.ToDoubleFunction<Run> figure) {
            return runs.stream().map(run -> figure.applyAsDouble(run)).toList();
        }

        /** The latency histograms of all repeats together. */
        /** CPU µs per operation over all runs: the server's or this JVM's; NaN without operations. */
        double cpuPerOp(boolean server) {
            double seconds = 0;
            long ops = 0;
            for (Run run : runs) {
                seconds += server ? run.serverCpuSeconds : run.clientCpuSeconds;
                ops += run.ops;
            }
            return ops == 0 ? Double.NaN : seconds * 1e6 / ops;
        }

        Histogram latency() {
            return merged(true);
        }

        Histogram handoff() {
            return merged(false);
        }

        private Histogram merged(boolean latency) {
            Histogram all = Stats.newHistogram();
            for (Run run : runs) {
                Histogram h = latency ? run.latency : run.handoff;
                if (h != null) {
                    all.add(h);
                }
            }
            return all;
        }

        boolean allExclusive() {
            return runs.stream().allMatch(Run::exclusive);
        }
    }

    /**
     * S1's paired turns: relock and one peer take turns of {@code turnSeconds} each, back to back, so that both
     * figures of a turn come from the same few hundred milliseconds of the machine; the ratio of a turn is relock's
     * rate over the peer's in it.
     */
    static final class PairedTurns {
        final String peer;
        final double turnSeconds;
        /** Pairs/s of relock, of the peer, and relock's over the peer's, one entry per turn in every list. */
        final List<Double> relockRates = new ArrayList<>();
        final List<Double> peerRates = new ArrayList<>();
        final List<Double> ratios = new ArrayList<>();
        String error;

        PairedTurns(String peer, double turnSeconds) {
            this.peer = peer;
            this.turnSeconds = turnSeconds;
        }

        void add(Run relock, Run peer) {
            relockRates.add(relock.opsPerSecond());
            peerRates.add(peer.opsPerSecond());
            ratios.add(relock.opsPerSecond() / peer.opsPerSecond());
        }

        boolean ok() {
            return error == null && !ratios.isEmpty();
        }

        double medianRatio() {
            return Stats.median(ratios);
        }
    }

    /** One scenario: every subject's runs. */
    static final class Scenario {
        final String id;
        final String title;
        final List<SubjectRuns> subjects = new ArrayList<>();
        final List<String> notes = new ArrayList<>();
        /** S1's paired turns of relock and its fastest peer; null where they did not run. */
        PairedTurns paired;

        Scenario(String id, String title) {
            this.id = id;
            this.title = title;
        }

        SubjectRuns find(String family, String labelPart) {
            for (SubjectRuns s : subjects) {
                if (s.family.equals(family) && s.label.contains(labelPart) && s.ok()) {
                    return s;
                }
            }
            return null;
        }
    }

    /** S4: one subject holding N locks at once. */
    static final class Held {
        String label;
        String family;
        int locks;
        long leaseMillis;
        double heapBytesPerLock;
        int threadsOfClient;
        int threadsAddedByHolding;
        double lockAllSeconds;
        double unlockAllSeconds;
        double windowSeconds;
        double commandsPerSecond;
        double roundTripsPerSecond;
        /** The busiest commands in the renewal window, e.g. "evalsha 10/s, pexpire 5,000/s". */
        String windowCommands;
        long unlockFailures;
        String firstUnlockFailure;
        long reportedLost;
        String error;
    }

    private Results() {
    }
}
