package dev.relock.cli;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.util.function.IntConsumer;

/**
 * Handlers for process signals (SIGINT, SIGTERM, SIGHUP) through {@code sun.misc.Signal} from the
 * jdk.unsupported module, reached by reflection: there is no supported API for this, and
 * reflection keeps the build free of "internal proprietary API" warnings and lets a JVM without
 * it (or one started with -Xrs, or one that reserves the signal) fall back to the default action
 * instead of failing.
 *
 * <p>Handlers run on the JVM's signal dispatcher thread, one signal at a time.
 */
final class Signals {

    /** The signal numbers on Linux (and most Unixes), for exit codes 128 + n. */
    static final int SIGHUP = 1;
    static final int SIGINT = 2;
    static final int SIGTERM = 15;

    /**
     * Replaces the JVM's handler of the signal {@code name} ("INT", "TERM", "HUP") with
     * {@code handler}, which receives the signal's number.
     *
     * @return whether the handler is installed; if not, the signal keeps its default action
     */
    static boolean handle(String name, IntConsumer handler) {
        try {
            Class<?> signalClass = Class.forName("sun.misc.Signal");
            Class<?> handlerClass = Class.forName("sun.misc.SignalHandler");
            Object signal = signalClass.getConstructor(String.class).newInstance(name);
            int number = (Integer) signalClass.getMethod("getNumber").invoke(signal);
            Object proxy = Proxy.newProxyInstance(Signals.class.getClassLoader(), new Class<?>[] {handlerClass},
                    (self, method, args) -> dispatch(self, method, args, number, handler));
            signalClass.getMethod("handle", signalClass, handlerClass).invoke(null, signal, proxy);
            return true;
        } catch (InvocationTargetException e) {
            // IllegalArgumentException: the signal is unknown here or reserved by the JVM (-Xrs)
            return false;
        } catch (ReflectiveOperationException | LinkageError | RuntimeException e) {
            return false;
        }
    }

    private static Object dispatch(Object self, Method method, Object[] args, int number, IntConsumer handler) {
        switch (method.getName()) {
            case "handle":
                handler.accept(number);
                return null;
            case "hashCode":
                return System.identityHashCode(self);
            case "equals":
                return self == args[0];
            default:
                return "relock handler of signal " + number;
        }
    }

    /** The signal's name for messages: "SIGTERM". */
    static String name(int number) {
        switch (number) {
            case SIGHUP:
                return "SIGHUP";
            case SIGINT:
                return "SIGINT";
            case SIGTERM:
                return "SIGTERM";
            default:
                return "signal " + number;
        }
    }

    private Signals() {}
}
