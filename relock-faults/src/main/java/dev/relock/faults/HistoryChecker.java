package dev.relock.faults;

import static java.nio.charset.StandardCharsets.UTF_8;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Judges a merged campaign history offline: overlapping critical sections and whether their holders were told,
 * fenced writes accepted out of token order, lost unfenced updates, and the longest unavailability.
 *
 * <p>Time is the merged order of the events: by stamp, equal stamps in file order, then line order. A worker is one
 * thread of a worker process: {@code w1} for a process of one thread, {@code w1.2} for the second thread of process
 * {@code w1}; a KILLED naming a process ends what each of its threads had open. A hold is named by its worker and
 * fencing token. A section holds the {@link Claim} its ACQUIRED names, and is open from its ACQUIRED to the first of
 * its worker's RELEASING, RELEASED, RELEASE_LOST, ERROR, AWAIT_START (a condition's await gives the lock up) or next
 * ACQUIRED of the same lock, or a KILLED naming its process; a section with none of these ends at its worker's last
 * event (the run stopped). A section B overlaps when it begins while sections of other workers on its lock that it
 * excludes are open, as many as B's claim allows at once (1, or a semaphore's permits); it overlaps untold when that
 * many of them have holders not yet told: a holder was told when a LOST for its hold is stamped no later than B's
 * ACQUIRED. A worker waits from REQUEST until its ACQUIRED, a KILLED naming its process, its last event, or the end
 * of the history (an ERROR followed by its next REQUEST does not end the wait). Each fenced register (RedisFence:
 * WRITE_*, the register named by the detail) and the SQL row (JdbcFence: SQL_*) are judged alike, each on its own.
 * A condition's queue and a latch's rounds are judged by {@link QueueChecker} and {@link LatchChecker}.
 */
final class HistoryChecker {

    private static final Comparator<HistoryEvent> IN_TIME = Comparator.comparingLong(HistoryEvent::nanos);

    private record Hold(String worker, long token) {}

    /** start and end are indexes into the merged events; end is the index of the event that ends it. */
    private record Section(Hold hold, Claim claim, int start, int end, long startNanos) {}

    /** A fenced write a register accepted: sent at sentNanos, its reply logged at acceptedNanos. */
    private record AcceptedWrite(String register, String worker, long token, long sentNanos, long acceptedNanos) {}

    /** Overlapping sections by whether their holders were told, and the LOST notices by when they came. */
    private record Overlaps(int untold, int told, int notices, int noticesBefore, int noticesAfter) {}

    private HistoryChecker() {}

    /** The events of the files, merged in time order; a line that does not parse fails naming its file and number. */
    static List<HistoryEvent> read(Path... files) throws IOException {
        List<HistoryEvent> events = new ArrayList<>();
        for (Path file : files) {
            List<String> lines = Files.readAllLines(file, UTF_8);
            for (int i = 0; i < lines.size(); i++) {
                try {
                    events.add(HistoryEvent.parse(lines.get(i)));
                } catch (IllegalArgumentException e) {
                    throw new IllegalArgumentException(file + ":" + (i + 1) + ": " + e.getMessage(), e);
                }
            }
        }
        events.sort(IN_TIME); // stable: equal stamps keep file, then line order
        return events;
    }

    static Findings check(List<HistoryEvent> history) {
        List<HistoryEvent> events = new ArrayList<>(history);
        events.sort(IN_TIME);
        List<Section> sections = sections(events);
        Overlaps overlaps = overlaps(sections, lostNotices(events));
        int refusedWrites = 0;
        int refusedSqlWrites = 0;
        int counterIncrements = 0;
        Set<String> valuesRead = new HashSet<>();
        long counterFinal = -1;
        int faults = 0;
        int kills = 0;
        int errors = 0;
        for (HistoryEvent e : events) {
            switch (e.kind()) {
                case WRITE_REFUSED -> refusedWrites++;
                case SQL_REFUSED -> refusedSqlWrites++;
                case COUNTER -> {
                    counterIncrements++;
                    valuesRead.add(e.detail());
                }
                case COUNTER_FINAL -> counterFinal = counterValue(e);
                case FAULT_START -> faults++;
                case KILLED -> kills++;
                case ERROR -> errors++;
                default -> { }
            }
        }
        return new Findings(sections.size(), overlaps.untold(), overlaps.told(), overlaps.notices(),
                overlaps.noticesBefore(), overlaps.noticesAfter(),
                staleWritesAccepted(acceptedWrites(events, EventKind.WRITE_SENT, EventKind.WRITE_OK,
                        EventKind.WRITE_REFUSED)), refusedWrites,
                staleWritesAccepted(acceptedWrites(events, EventKind.SQL_SENT, EventKind.SQL_OK,
                        EventKind.SQL_REFUSED)), refusedSqlWrites, counterIncrements, counterFinal,
                counterIncrements - valuesRead.size(), maxUnavailableNanos(events, sections),
                faults, kills, errors, readersPastAWaitingWriter(events), QueueChecker.check(events),
                LatchChecker.check(events));
    }

    /** Whether {@code worker} is process {@code process} or one of its threads. */
    static boolean isOf(String worker, String process) {
        return worker.equals(process) || (worker.startsWith(process) && worker.length() > process.length()
                && worker.charAt(process.length()) == '.');
    }

    /** Every section of the events, in the order they began. */
    private static List<Section> sections(List<HistoryEvent> events) {
        Map<String, Integer> lastEvent = new HashMap<>();
        for (int i = 0; i < events.size(); i++) {
            lastEvent.put(events.get(i).worker(), i);
        }
        // worker -> lock -> index of the ACQUIRED of its open section on that lock
        Map<String, Map<String, Integer>> openedAt = new HashMap<>();
        List<Section> sections = new ArrayList<>();
        for (int i = 0; i < events.size(); i++) {
            HistoryEvent e = events.get(i);
            switch (e.kind()) {
                case ACQUIRED -> {
                    Claim claim = Claim.parse(e.detail());
                    Integer previous = openedAt.computeIfAbsent(e.worker(), w -> new HashMap<>()).put(claim.lock(), i);
                    if (previous != null) {
                        sections.add(section(events, previous, i));
                    }
                }
                case RELEASING, RELEASED, RELEASE_LOST, ERROR, AWAIT_START -> endAll(openedAt.remove(e.worker()),
                        events, i, sections);
                case KILLED -> {
                    int end = i;
                    openedAt.entrySet().removeIf(open -> {
                        if (!isOf(open.getKey(), e.detail())) {
                            return false;
                        }
                        endAll(open.getValue(), events, end, sections);
                        return true;
                    });
                }
                default -> { }
            }
        }
        openedAt.forEach((worker, open) -> endAll(open, events, lastEvent.get(worker), sections));
        sections.sort(Comparator.comparingInt(Section::start));
        return sections;
    }

    private static void endAll(Map<String, Integer> open, List<HistoryEvent> events, int end, List<Section> sections) {
        if (open != null) {
            open.values().forEach(start -> sections.add(section(events, start, end)));
        }
    }

    private static Section section(List<HistoryEvent> events, int start, int end) {
        HistoryEvent acquired = events.get(start);
        return new Section(new Hold(acquired.worker(), acquired.token()), Claim.parse(acquired.detail()), start, end,
                acquired.nanos());
    }

    /** The stamp of each hold's first LOST notice. */
    private static Map<Hold, Long> lostNotices(List<HistoryEvent> events) {
        Map<Hold, Long> noticed = new HashMap<>();
        for (HistoryEvent e : events) {
            if (e.kind() == EventKind.LOST) {
                noticed.putIfAbsent(new Hold(e.worker(), e.token()), e.nanos());
            }
        }
        return noticed;
    }

    private static Overlaps overlaps(List<Section> sections, Map<Hold, Long> lostNotices) {
        Map<Hold, Long> firstOverlapNanos = new HashMap<>(); // per hold, when the first section overlapping it began
        int untold = 0;
        int told = 0;
        List<Section> open = new ArrayList<>();
        for (Section b : sections) {
            open.removeIf(a -> a.end() <= b.start());
            // of other workers: a worker's section on a lock ends by its next ACQUIRED of that lock at the latest
            List<Section> excluded = open.stream()
                    .filter(a -> a.claim().lock().equals(b.claim().lock()) && b.claim().excludes(a.claim())).toList();
            if (excluded.size() >= b.claim().permits()) {
                int untoldHolders = 0;
                for (Section a : excluded) {
                    firstOverlapNanos.putIfAbsent(a.hold(), b.startNanos());
                    Long notice = lostNotices.get(a.hold());
                    untoldHolders += notice == null || notice > b.startNanos() ? 1 : 0;
                }
                if (untoldHolders >= b.claim().permits()) {
                    untold++;
                } else {
                    told++;
                }
            }
            open.add(b);
        }
        int before = 0;
        int after = 0;
        for (Map.Entry<Hold, Long> notice : lostNotices.entrySet()) {
            Long overlap = firstOverlapNanos.get(notice.getKey());
            if (overlap != null && notice.getValue() <= overlap) {
                before++;
            } else if (overlap != null) {
                after++;
            }
        }
        return new Overlaps(untold, told, lostNotices.size(), before, after);
    }

    /**
     * Read sections that began while a writer that asked before the reader did was still waiting (its REQUEST of a
     * write hold on the same lock stamped before the reader's REQUEST, its ACQUIRED not yet): a statistic of writer
     * preference, not a verdict, since a REQUEST is stamped before the request reaches Redis and a reader may
     * re-enter a read lock it holds.
     */
    private static int readersPastAWaitingWriter(List<HistoryEvent> events) {
        Map<String, HistoryEvent> waitingWriters = new HashMap<>(); // worker -> its REQUEST of a write hold
        Map<String, Long> readRequested = new HashMap<>(); // worker -> stamp of its REQUEST of a read hold
        int past = 0;
        for (HistoryEvent e : events) {
            switch (e.kind()) {
                case REQUEST -> {
                    if (!e.detail().isEmpty() && Claim.parse(e.detail()).mode() == Claim.Mode.READ) {
                        readRequested.put(e.worker(), e.nanos());
                    } else {
                        waitingWriters.put(e.worker(), e);
                    }
                }
                case ACQUIRED -> {
                    waitingWriters.remove(e.worker());
                    Long asked = readRequested.remove(e.worker());
                    String lock = Claim.parse(e.detail()).lock();
                    past += asked != null && waitingWriters.values().stream().anyMatch(w -> w.nanos() < asked
                            && Claim.parse(w.detail()).lock().equals(lock)) ? 1 : 0;
                }
                case KILLED -> waitingWriters.keySet().removeIf(worker -> isOf(worker, e.detail()));
                default -> { }
            }
        }
        return past;
    }

    /**
     * Each accepted write ({@code ok}, e.g. WRITE_OK) paired with its worker's preceding {@code sent}, of the register
     * the sent event's detail names; a reply without one is left out, a {@code refused} reply ends its write.
     */
    private static List<AcceptedWrite> acceptedWrites(List<HistoryEvent> events, EventKind sentKind,
            EventKind okKind, EventKind refusedKind) {
        Map<String, HistoryEvent> sent = new HashMap<>();
        List<AcceptedWrite> accepted = new ArrayList<>();
        for (HistoryEvent e : events) {
            if (e.kind() == sentKind) {
                sent.put(e.worker(), e);
            } else if (e.kind() == refusedKind) {
                sent.remove(e.worker());
            } else if (e.kind() == okKind) {
                HistoryEvent write = sent.remove(e.worker());
                if (write != null) {
                    accepted.add(new AcceptedWrite(write.detail(), e.worker(), write.token(), write.nanos(),
                            e.nanos()));
                }
            }
        }
        return accepted;
    }

    /** {@link #staleWritesAcceptedAt} summed over the registers written. */
    private static int staleWritesAccepted(List<AcceptedWrite> writes) {
        Map<String, List<AcceptedWrite>> byRegister = new HashMap<>();
        writes.forEach(w -> byRegister.computeIfAbsent(w.register(), r -> new ArrayList<>()).add(w));
        return byRegister.values().stream().mapToInt(HistoryChecker::staleWritesAcceptedAt).sum();
    }

    /**
     * Accepted writes b of one register with an accepted write a of a higher token whose reply came before b was
     * sent. Writes whose intervals overlap have no certain order and are not compared.
     */
    private static int staleWritesAcceptedAt(List<AcceptedWrite> writes) {
        List<AcceptedWrite> bySent = new ArrayList<>(writes);
        bySent.sort(Comparator.comparingLong(AcceptedWrite::sentNanos));
        List<AcceptedWrite> byReply = new ArrayList<>(writes);
        byReply.sort(Comparator.comparingLong(AcceptedWrite::acceptedNanos));
        long highestAnswered = Long.MIN_VALUE; // the highest token of the writes answered before b was sent
        String highestBy = null; // the worker that wrote it; "" when several did (one token, two holders)
        int answered = 0;
        int stale = 0;
        for (AcceptedWrite b : bySent) {
            while (answered < byReply.size() && byReply.get(answered).acceptedNanos() < b.sentNanos()) {
                AcceptedWrite a = byReply.get(answered++);
                if (a.token() > highestAnswered) {
                    highestAnswered = a.token();
                    highestBy = a.worker();
                } else if (a.token() == highestAnswered && !a.worker().equals(highestBy)) {
                    highestBy = "";
                }
            }
            // an equal token is the same hold writing again, unless another worker wrote with it
            if (highestAnswered > b.token() || (highestAnswered == b.token() && !b.worker().equals(highestBy))) {
                stale++;
            }
        }
        return stale;
    }

    /**
     * The longest stretch in which a worker waited and fewer sections were open than may be at once (1, or a
     * semaphore's permits); a stretch still running at the end of the history lasts until its last event. A worker
     * waits from its REQUEST until its ACQUIRED, a KILLED naming its process, or an ERROR that is its last event: a
     * failed attempt followed by another is one wait.
     */
    private static long maxUnavailableNanos(List<HistoryEvent> events, List<Section> sections) {
        int[] openDelta = new int[events.size() + 1]; // change in open sections after each event
        int capacity = 1;
        for (Section s : sections) {
            capacity = Math.max(capacity, s.claim().mode() == Claim.Mode.PERMIT ? s.claim().permits() : 1);
            openDelta[s.start()]++;
            openDelta[s.end()]--;
        }
        Map<String, Integer> lastEvent = new HashMap<>();
        for (int i = 0; i < events.size(); i++) {
            lastEvent.put(events.get(i).worker(), i);
        }
        Set<String> waiting = new HashSet<>();
        int open = 0;
        boolean unavailable = false;
        long unavailableSince = 0;
        long longest = 0;
        for (int i = 0; i < events.size(); i++) {
            HistoryEvent e = events.get(i);
            open += openDelta[i];
            switch (e.kind()) {
                case REQUEST -> waiting.add(e.worker());
                case ACQUIRED -> waiting.remove(e.worker());
                // a failed attempt is followed by the next (after a pause): the worker still wants the lock, unless
                // that was its last word
                case ERROR -> {
                    if (lastEvent.get(e.worker()) == i) {
                        waiting.remove(e.worker());
                    }
                }
                case KILLED -> waiting.removeIf(worker -> isOf(worker, e.detail()));
                default -> { }
            }
            boolean nowUnavailable = open < capacity && !waiting.isEmpty();
            if (nowUnavailable && !unavailable) {
                unavailableSince = e.nanos();
            } else if (unavailable && !nowUnavailable) {
                longest = Math.max(longest, e.nanos() - unavailableSince);
            }
            unavailable = nowUnavailable;
        }
        if (unavailable) {
            longest = Math.max(longest, events.get(events.size() - 1).nanos() - unavailableSince);
        }
        return longest;
    }

    private static long counterValue(HistoryEvent finalCount) {
        try {
            return Long.parseLong(finalCount.detail());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("COUNTER_FINAL without a number: " + finalCount.line(), e);
        }
    }
}
