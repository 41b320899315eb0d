package dev.relock;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** The kinds' labels are the words users saw when kinds were strings (no Redis needed). */
class LockKindTest {

    @Test
    void eachKindIsLabelledAndPrintedAsTheFormerString() {
        assertThat(LockKind.values()).extracting(LockKind::label)
                .containsExactly("exclusive", "shared", "free", "semaphore");
        assertThat(LockKind.values()).allSatisfy(kind -> assertThat(kind).hasToString(kind.label()));
    }
}
