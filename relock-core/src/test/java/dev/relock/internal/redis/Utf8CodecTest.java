package dev.relock.internal.redis;

import static org.assertj.core.api.Assertions.assertThat;

import io.lettuce.core.cluster.SlotHash;
import io.lettuce.core.codec.StringCodec;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Lettuce writes an argument's length from {@link Utf8Codec#estimateSize} and then the bytes {@link
 * Utf8Codec#encodeValue(String, ByteBuf)} writes: a count that differed would corrupt the command stream. No Redis
 * needed; {@code LockContract#aNonAsciiNameIsOneLockAcrossClientsUnderItsUtf8KeyAndItsWaiterIsHandedIt} sends such
 * names to the servers of every deployment.
 */
class Utf8CodecTest {

    private static final List<String> TEXTS = List.of("", "relock:{orders}", "zähler-Ω-🔒", "日本語のロック",
            "a\uD800", "\uDC00b", "\uD800\uD800x", "\uD83D", "x\uD83D\uDD12y", "%7B{}%25");

    @Test
    void theLengthGivenIsTheNumberOfBytesWritten() {
        for (String text : TEXTS) {
            ByteBuf key = Unpooled.buffer();
            ByteBuf value = Unpooled.buffer();
            Utf8Codec.INSTANCE.encodeKey(text, key);
            Utf8Codec.INSTANCE.encodeValue(text, value);
            assertThat(key.readableBytes()).as("key bytes of %s", escaped(text))
                    .isEqualTo(Utf8Codec.INSTANCE.estimateSize(text));
            assertThat(value.readableBytes()).as("value bytes of %s", escaped(text))
                    .isEqualTo(Utf8Codec.INSTANCE.estimateSize(text));
        }
        assertThat(Utf8Codec.INSTANCE.isEstimateExact()).isTrue();
    }

    @Test
    void theBytesAreThoseOfLettucesUtf8Codec() {
        for (String text : TEXTS) {
            ByteBuf ours = Unpooled.buffer();
            ByteBuf lettuces = Unpooled.buffer();
            Utf8Codec.INSTANCE.encodeValue(text, ours);
            StringCodec.UTF8.encodeValue(text, lettuces);
            assertThat(ByteBufUtil.getBytes(ours)).as("bytes of %s", escaped(text))
                    .isEqualTo(ByteBufUtil.getBytes(lettuces));
            assertThat(Utf8Codec.INSTANCE.decodeValue(ours.nioBuffer())).isEqualTo(StringCodec.UTF8.decodeValue(
                    lettuces.nioBuffer()));
        }
        // well-formed text: what Java's own encoder gives
        assertThat(Utf8Codec.INSTANCE.estimateSize("zähler-Ω-🔒"))
                .isEqualTo("zähler-Ω-🔒".getBytes(StandardCharsets.UTF_8).length);
    }

    private static String escaped(String text) {
        StringBuilder out = new StringBuilder();
        text.chars().forEach(c -> out.append(c < 128 ? String.valueOf((char) c) : String.format("\\u%04X", c)));
        return out.toString();
    }

    @Test
    void aKeysSlotIsThatOfItsUtf8Bytes() {
        for (String key : List.of("relock:{zähler-Ω-🔒}", "relock:{orders}", "日本語")) {
            assertThat(Utf8Codec.slotOf(key)).as(escaped(key))
                    .isEqualTo(SlotHash.getSlot(key.getBytes(StandardCharsets.UTF_8)));
        }
    }
}
