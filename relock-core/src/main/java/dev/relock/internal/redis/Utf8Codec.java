package dev.relock.internal.redis;

import io.lettuce.core.cluster.SlotHash;
import io.lettuce.core.codec.RedisCodec;
import io.lettuce.core.codec.StringCodec;
import io.lettuce.core.codec.ToByteBufEncoder;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import java.nio.ByteBuffer;

/**
 * UTF-8 strings, as {@link StringCodec#UTF8}, for every connection relock opens, but encoded straight into the
 * command's buffer. {@link StringCodec#UTF8} gives only an upper bound of an argument's length, so Lettuce encodes
 * every key and argument into a temporary pooled buffer first, to learn the length the protocol writes before the
 * bytes; this codec gives the exact length ({@link ByteBufUtil#utf8Bytes}, which Netty defines as the count {@link
 * ByteBufUtil#writeUtf8} writes, unpaired surrogates included), so Lettuce writes the header and then the bytes in
 * place. Replies decode as {@link StringCodec#UTF8} decodes them. Stateless and thread-safe.
 *
 * <p>Public because both engines, each in a package of its own, open connections with it.
 */
public final class Utf8Codec implements RedisCodec<String, String>, ToByteBufEncoder<String, String> {

    public static final Utf8Codec INSTANCE = new Utf8Codec();

    private static final StringCodec DECODER = StringCodec.UTF8;

    private Utf8Codec() {}

    @Override
    public String decodeKey(ByteBuffer bytes) {
        return DECODER.decodeKey(bytes);
    }

    @Override
    public String decodeValue(ByteBuffer bytes) {
        return DECODER.decodeValue(bytes);
    }

    @Override
    public ByteBuffer encodeKey(String key) {
        return DECODER.encodeKey(key);
    }

    @Override
    public ByteBuffer encodeValue(String value) {
        return DECODER.encodeValue(value);
    }

    @Override
    public void encodeKey(String key, ByteBuf target) {
        write(key, target);
    }

    @Override
    public void encodeValue(String value, ByteBuf target) {
        write(value, target);
    }

    /** The exact number of bytes {@link #encodeKey(String, ByteBuf)} writes; 0 for null, which writes nothing. */
    @Override
    public int estimateSize(Object keyOrValue) {
        return keyOrValue instanceof String text ? ByteBufUtil.utf8Bytes(text) : 0;
    }

    @Override
    public boolean isEstimateExact() {
        return true;
    }

    /**
     * The Cluster slot of {@code key} as Lettuce routes it on relock's connections: of its UTF-8 bytes. ({@link
     * SlotHash#getSlot(String)} hashes the platform's default charset, which Java 17 may set to another.)
     */
    public static int slotOf(String key) {
        return SlotHash.getSlot(INSTANCE.encodeKey(key));
    }

    private static void write(String text, ByteBuf target) {
        if (text != null) {
            ByteBufUtil.writeUtf8(target, text);
        }
    }
}
