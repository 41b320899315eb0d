package dev.relock.spring.internal;

import static org.assertj.core.api.Assertions.assertThat;

import dev.relock.spring.DistributedLock;
import dev.relock.spring.DistributedLock.WhenNotAcquired;
import java.lang.reflect.Method;
import java.util.function.Predicate;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.springframework.aot.hint.MemberCategory;
import org.springframework.aot.hint.RuntimeHints;
import org.springframework.aot.hint.TypeReference;
import org.springframework.aot.hint.predicate.RuntimeHintsPredicates;
import org.springframework.aot.test.generate.TestGenerationContext;
import org.springframework.context.aot.ApplicationContextAotGenerator;
import org.springframework.context.support.GenericApplicationContext;

/**
 * What Spring AOT records for the {@code @DistributedLock} methods of a context's beans: the context is processed as
 * an AOT build processes it, so {@link DistributedLockAotProcessor} is found through {@code aot.factories}, and the
 * hints are checked with Spring's predicates for what a native image needs.
 */
class DistributedLockAotProcessorTest {

    @Test
    void eachLockedMethodAndItsFallbackCanBeCalledByReflection() throws NoSuchMethodException {
        RuntimeHints hints = processedWith(Reports.class);

        assertThat(invocable(Reports.class.getMethod("write", String.class))).accepts(hints);
        assertThat(invocable(Reports.class.getMethod("export"))).accepts(hints);
        assertThat(invocable(Reports.class.getMethod("exportLater"))).accepts(hints);
        assertThat(invocable(Reports.class.getMethod("pending"))).accepts(hints);
        assertThat(invocable(Reports.class.getMethod("unlocked"))).rejects(hints);
    }

    @Test
    void aMethodLockedInItsInterfaceCanBeCalledThroughTheClassAndTheInterface() throws NoSuchMethodException {
        RuntimeHints hints = processedWith(Reports.class);

        assertThat(invocable(Reports.class.getMethod("nightly"))).accepts(hints);
        assertThat(invocable(Scheduled.class.getMethod("nightly"))).accepts(hints);
    }

    @Test
    void theEmptyArrayOfASkippedCallCanBeMade() {
        assertThat(RuntimeHintsPredicates.reflection().onType(Report[].class)).accepts(processedWith(Reports.class));
    }

    @Test
    void nameExpressionsCanReadTheirRootAndMonoOrFluxResultsAreRecognised() {
        RuntimeHints hints = processedWith(Reports.class);

        assertThat(RuntimeHintsPredicates.reflection().onType(LockNameRoot.class)
                .withMemberCategory(MemberCategory.INVOKE_PUBLIC_METHODS)).accepts(hints);
        assertThat(Stream.of("org.reactivestreams.Publisher", "reactor.core.publisher.Mono",
                "reactor.core.publisher.Flux", "dev.relock.reactor.ReactiveLocks")).allSatisfy(typeName ->
                assertThat(RuntimeHintsPredicates.reflection().onType(TypeReference.of(typeName))).accepts(hints));
    }

    @Test
    void aContextWithoutLockedMethodsGetsNoneOfTheseHints() throws NoSuchMethodException {
        RuntimeHints hints = processedWith(Plain.class);

        assertThat(invocable(Plain.class.getMethod("work"))).rejects(hints);
        assertThat(RuntimeHintsPredicates.reflection().onType(LockNameRoot.class)).rejects(hints);
    }

    /** The hints an AOT build of a context with one bean of {@code beanClass} records. */
    private static RuntimeHints processedWith(Class<?> beanClass) {
        try (GenericApplicationContext context = new GenericApplicationContext()) {
            context.registerBean(beanClass);
            TestGenerationContext generated = new TestGenerationContext();
            new ApplicationContextAotGenerator().processAheadOfTime(context, generated);
            return generated.getRuntimeHints();
        }
    }

    @SuppressWarnings("removal") // onMethod: Spring 7 offers onMethodInvocation, which Spring 6.2 lacks
    private static Predicate<RuntimeHints> invocable(Method method) {
        return RuntimeHintsPredicates.reflection().onMethod(method).invoke();
    }

    /** A bean interface whose method is locked where it is declared. */
    public interface Scheduled {

        @DistributedLock(name = "'nightly'")
        void nightly();
    }

    /** What a skipped call returns. */
    public record Report(String day) {}

    /** A bean with locked methods of each kind the hints tell apart, and one that is not locked. */
    public static class Reports implements Scheduled {

        @DistributedLock(name = "'report:' + #p0")
        public String write(String day) {
            return day;
        }

        @DistributedLock(name = "'export'", whenNotAcquired = WhenNotAcquired.FALLBACK, fallback = "exportLater")
        public String export() {
            return "exported";
        }

        public String exportLater() {
            return "queued";
        }

        @DistributedLock(name = "'pending'", whenNotAcquired = WhenNotAcquired.SKIP)
        public Report[] pending() {
            return new Report[] {new Report("today")};
        }

        @Override
        public void nightly() {
        }

        public String unlocked() {
            return "free";
        }
    }

    /** A bean without locked methods. */
    public static class Plain {

        public void work() {
        }
    }
}
