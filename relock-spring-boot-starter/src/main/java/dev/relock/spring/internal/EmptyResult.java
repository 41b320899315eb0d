package dev.relock.spring.internal;

import java.lang.reflect.Array;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalDouble;
import java.util.OptionalInt;
import java.util.OptionalLong;
import java.util.function.Supplier;
import java.util.stream.Stream;
import org.springframework.aot.hint.MemberCategory;
import org.springframework.aot.hint.ReflectionHints;
import org.springframework.core.CollectionFactory;

/** What a skipped method returns: the value that stands for "nothing" in its return type. */
final class EmptyResult {

    private EmptyResult() {}

    /**
     * A supplier of the empty value of {@code type}, fresh for every call where the value is mutable.
     *
     * @throws IllegalArgumentException if the type has no empty value (a primitive other than void)
     */
    static Supplier<Object> of(Class<?> type) {
        if (type == void.class || type == Void.class) {
            return () -> null;
        }
        if (type.isPrimitive()) {
            throw new IllegalArgumentException("a method returning " + type.getName()
                    + " cannot be skipped: it has no empty value (use THROW or FALLBACK)");
        }
        if (type == Optional.class) {
            return Optional::empty;
        }
        if (type == OptionalInt.class) {
            return OptionalInt::empty;
        }
        if (type == OptionalLong.class) {
            return OptionalLong::empty;
        }
        if (type == OptionalDouble.class) {
            return OptionalDouble::empty;
        }
        if (type == Stream.class) {
            return Stream::empty;
        }
        if (type.isArray()) {
            Object empty = Array.newInstance(type.getComponentType(), 0);
            return () -> empty;
        }
        if (Collection.class.isAssignableFrom(type)) {
            // fails now, at start-up, for a collection type it cannot create
            CollectionFactory.createCollection(type, 0);
            return () -> CollectionFactory.createCollection(type, 0);
        }
        if (Map.class.isAssignableFrom(type)) {
            CollectionFactory.createMap(type, 0);
            return () -> CollectionFactory.createMap(type, 0);
        }
        if (type == Iterable.class) {
            return List::of;
        }
        return () -> null;
    }

    /**
     * Registers what {@link #of} reaches by reflection for {@code type}, for a native image: the array type whose
     * empty instance it makes, or the constructors of a concrete collection or map class it may instantiate.
     */
    static void registerHints(ReflectionHints hints, Class<?> type) {
        if (type.isArray()) {
            hints.registerType(type);
        } else if (!type.isInterface()
                && (Collection.class.isAssignableFrom(type) || Map.class.isAssignableFrom(type))) {
            hints.registerType(type, MemberCategory.INVOKE_DECLARED_CONSTRUCTORS);
        }
    }
}
