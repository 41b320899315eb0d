package dev.relock.internal.redis;

import dev.relock.internal.script.LuaScript;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.internal.ExceptionFactory;
import io.lettuce.core.output.BooleanOutput;
import io.lettuce.core.output.CommandOutput;
import io.lettuce.core.output.IntegerOutput;
import io.lettuce.core.output.NestedMultiOutput;
import io.lettuce.core.output.ObjectOutput;
import io.lettuce.core.output.StatusOutput;
import io.lettuce.core.output.ValueOutput;
import io.lettuce.core.protocol.Command;
import io.lettuce.core.protocol.CommandArgs;
import io.lettuce.core.protocol.CommandType;
import io.lettuce.core.protocol.CommandWrapper;
import io.lettuce.core.protocol.CompleteableCommand;
import io.lettuce.core.protocol.RedisCommand;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CancellationException;
import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;
import java.util.function.BiConsumer;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The EVALSHA of a {@link ScriptCalls.ScriptCall}, which Lettuce writes, completes, times out and cancels: it does
 * for the call what an {@link io.lettuce.core.protocol.AsyncCommand} does for a command of Lettuce's API, with no
 * future and no completion stage of its own, as every lock and release sends one. It ends once, at the first end
 * Lettuce reports (one reported later, such as its timeout firing as the reply is read, changes nothing); it then
 * runs what Lettuce asked to run at its end (the cancel of its timeout) and hands its outcome to the call.
 */
final class Evalsha<T> extends Command<String, String, T> implements CompleteableCommand<T> {

    private static final Logger log = LoggerFactory.getLogger(Evalsha.class);

    // "0" to "9" in ASCII, the key counts of EVALSHA; shared, never changed
    private static final byte[][] KEY_COUNTS = new byte[10][];

    static {
        for (int count = 0; count < KEY_COUNTS.length; count++) {
            KEY_COUNTS[count] = new byte[] {(byte) ('0' + count)};
        }
    }

    @SuppressWarnings("rawtypes")
    private static final AtomicIntegerFieldUpdater<Evalsha> ENDED =
            AtomicIntegerFieldUpdater.newUpdater(Evalsha.class, "ended");

    private final ScriptCalls.ScriptCall<T> call;
    // 1 once Lettuce reported the end
    private volatile int ended;
    // what Lettuce asked to run at the end, in its order: the first here, any more (tracing) in moreOnEnd;
    // taken, and run, by the thread that ended it, once its outcome is in place (endTaken). Guarded by this
    private BiConsumer<? super T, Throwable> onEnd;
    private List<BiConsumer<? super T, Throwable>> moreOnEnd;
    private boolean endTaken;

    Evalsha(ScriptCalls.ScriptCall<T> call, LuaScript script, ScriptOutputType type, String[] keys, String[] args) {
        super(CommandType.EVALSHA, output(type), new CommandArgs<>(Utf8Codec.INSTANCE));
        this.call = call;
        // the digest and the key count as bytes, which Lettuce copies: as a String and a number it would encode
        // them through new strings and arrays every time
        this.args.add(script.shaBytes());
        if (keys.length < KEY_COUNTS.length) {
            this.args.add(KEY_COUNTS[keys.length]);
        } else {
            this.args.add(keys.length);
        }
        this.args.addKeys(keys).addValues(args);
    }

    /** Lettuce read the reply, on the I/O thread. */
    @Override
    public void complete() {
        if (ENDED.compareAndSet(this, 0, 1)) {
            super.complete();
            Throwable failure = failure();
            ended(failure == null ? output.get() : null, failure);
        }
    }

    /** Why it failed, once ended: cancelled, failed by Lettuce, or answered with an error; null if it did not. */
    private Throwable failure() {
        return isCancelled() ? new CancellationException("Lettuce cancelled the command")
                : exception != null ? exception
                : output.hasError() ? ExceptionFactory.createExecutionException(output.getError())
                : null;
    }

    /** Lettuce failed it: a timeout, a lost connection, a refusal. */
    @Override
    public boolean completeExceptionally(Throwable error) {
        if (!ENDED.compareAndSet(this, 0, 1)) {
            return false;
        }
        super.completeExceptionally(error);
        ended(null, error);
        return true;
    }

    /** Lettuce cancelled it: its connection was closed or reset with it unanswered. */
    @Override
    public void cancel() {
        if (ENDED.compareAndSet(this, 0, 1)) {
            super.cancel();
            ended(null, failure());
        }
    }

    private void ended(T value, Throwable error) {
        BiConsumer<? super T, Throwable> first;
        List<BiConsumer<? super T, Throwable>> more;
        synchronized (this) {
            first = onEnd;
            more = moreOnEnd;
            onEnd = null;
            moreOnEnd = null;
            endTaken = true;
        }
        if (first != null) {
            runOnEnd(first, value, error);
        }
        if (more != null) {
            more.forEach(action -> runOnEnd(action, value, error));
        }
        call.answered(value, error);
    }

    private void runOnEnd(BiConsumer<? super T, Throwable> action, T value, Throwable error) {
        try {
            action.accept(value, error);
        } catch (RuntimeException e) {
            // as in a completion stage, a failure of one stays with it
            log.warn("what Lettuce runs at the end of an EVALSHA failed", e);
        }
    }

    @Override
    public void onComplete(BiConsumer<? super T, Throwable> action) {
        synchronized (this) {
            if (!endTaken) {
                if (onEnd == null) {
                    onEnd = action;
                } else {
                    if (moreOnEnd == null) {
                        moreOnEnd = new ArrayList<>(2);
                    }
                    moreOnEnd.add(action);
                }
                return;
            }
        }
        // ended, with its outcome in place
        Throwable failure = failure();
        runOnEnd(action, failure == null ? output.get() : null, failure);
    }

    @Override
    public void onComplete(Consumer<? super T> action) {
        onComplete((value, error) -> {
            if (error == null) {
                action.accept(value);
            }
        });
    }

    /** As Lettuce's own commands: equal to every wrapper of it. */
    @Override
    public boolean equals(Object other) {
        return other instanceof RedisCommand<?, ?, ?> command && CommandWrapper.unwrap(command) == this;
    }

    @Override
    public int hashCode() {
        return System.identityHashCode(this);
    }

    /** The output Lettuce's own EVALSHA of {@code type} decodes into. */
    @SuppressWarnings("unchecked")
    private static <T> CommandOutput<String, String, T> output(ScriptOutputType type) {
        return (CommandOutput<String, String, T>) switch (type) {
            case BOOLEAN -> new BooleanOutput<>(Utf8Codec.INSTANCE);
            case INTEGER -> new IntegerOutput<>(Utf8Codec.INSTANCE);
            case STATUS -> new StatusOutput<>(Utf8Codec.INSTANCE);
            case MULTI -> new NestedMultiOutput<>(Utf8Codec.INSTANCE);
            case VALUE -> new ValueOutput<>(Utf8Codec.INSTANCE);
            case OBJECT -> new ObjectOutput<>(Utf8Codec.INSTANCE);
        };
    }
}
