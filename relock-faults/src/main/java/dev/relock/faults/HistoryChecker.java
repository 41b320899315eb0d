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
 * <p>Time is the merged order of the events: by stamp, equal stamps in file order, then line order. A hold is
 * named by its worker and fencing token. A section is open from its ACQUIRED to the first of its worker's
 * RELEASING, RELEASED, RELEASE_LOST, ERROR or next ACQUIRED, or a KILLED naming its worker; a section with none of these ends
 * at its worker's last event (the run stopped). A section B overlaps A when B begins while A, of another worker,
 * is open; A's holder was told when a LOST for A's hold is stamped no later than B's ACQUIRED. A worker waits from
 * REQUEST until its ACQUIRED, a KILLED naming it, its last event, or the end of the history (an ERROR followed by its
 * next REQUEST does not end the wait). The register (RedisFence:
 * WRITE_*) and the SQL row (JdbcFence: SQL_*) are judged alike, each on its own.
 */
final class HistoryChecker {

    private static final Comparator<HistoryEvent> IN_TIME = Comparator.comparingLong(HistoryEvent::nanos);

    private record Hold(String worker, long token) {}

    /** start and end are indexes into the merged events; end is the index of the event that ends it. */
    private record Section(Hold hold, int start, int end, long startNanos) {}

    /** A fenced write the register accepted: sent at sentNanos, its reply logged at acceptedNanos. */
    private record AcceptedWrite(String worker, long token, long sentNanos, long acceptedNanos) {}

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
                faults, kills, errors);
    }

    /** Every section of the events, in the order they began. */
    private static List<Section> sections(List<HistoryEvent> events) {
        Map<String, Integer> lastEvent = new HashMap<>();
        for (int i = 0; i < events.size(); i++) {
            lastEvent.put(events.get(i).worker(), i);
        }
        Map<String, Integer> openedAt = new HashMap<>(); // worker -> index of the ACQUIRED of its open section
        List<Section> sections = new ArrayList<>();
        for (int i = 0; i < events.size(); i++) {
            HistoryEvent e = events.get(i);
            String ending = switch (e.kind()) {
                case ACQUIRED, RELEASING, RELEASED, RELEASE_LOST, ERROR -> e.worker();
                case KILLED -> e.detail();
                default -> null;
            };
            Integer start = ending == null ? null : openedAt.remove(ending);
            if (start != null) {
                sections.add(section(events, start, i));
            }
            if (e.kind() == EventKind.ACQUIRED) {
                openedAt.put(e.worker(), i);
            }
        }
        openedAt.forEach((worker, start) -> sections.add(section(events, start, lastEvent.get(worker))));
        sections.sort(Comparator.comparingInt(Section::start));
        return sections;
    }

    private static Section section(List<HistoryEvent> events, int start, int end) {
        HistoryEvent acquired = events.get(start);
        return new Section(new Hold(acquired.worker(), acquired.token()), start, end, acquired.nanos());
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
            // what is left belongs to other workers: a worker's section ends by its next ACQUIRED at the latest
            boolean anyUntold = false;
            for (Section a : open) {
                firstOverlapNanos.putIfAbsent(a.hold(), b.startNanos());
                Long notice = lostNotices.get(a.hold());
                anyUntold |= notice == null || notice > b.startNanos();
            }
            if (anyUntold) {
                untold++;
            } else if (!open.isEmpty()) {
                told++;
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
     * Each accepted write ({@code ok}, e.g. WRITE_OK) paired with its worker's preceding {@code sent}; a reply
     * without one is left out, a {@code refused} reply ends its write.
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
                    accepted.add(new AcceptedWrite(e.worker(), write.token(), write.nanos(), e.nanos()));
                }
            }
        }
        return accepted;
    }

    /**
     * Accepted writes b with an accepted write a of a higher token whose reply came before b was sent. Writes
     * whose intervals overlap have no certain order and are not compared.
     */
    private static int staleWritesAccepted(List<AcceptedWrite> writes) {
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
     * The longest stretch in which a worker waited and no section was open; a stretch still running at the end of the
     * history lasts until its last event. A worker waits from its REQUEST until its ACQUIRED, a KILLED naming it, or
     * an ERROR that is its last event: a failed attempt followed by another is one wait.
     */
    private static long maxUnavailableNanos(List<HistoryEvent> events, List<Section> sections) {
        int[] openDelta = new int[events.size() + 1]; // change in open sections after each event
        for (Section s : sections) {
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
                case KILLED -> waiting.remove(e.detail());
                default -> { }
            }
            boolean nowUnavailable = open == 0 && !waiting.isEmpty();
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
