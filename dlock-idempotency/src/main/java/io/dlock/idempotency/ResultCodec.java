package io.dlock.idempotency;

import java.nio.charset.StandardCharsets;
import java.util.Objects;

/**
 * Turns an action's result into the bytes a dedup record stores, and back, so that a later call
 * with the same key gets the first call's result. Implementations must be deterministic and
 * thread-safe; {@link #STRING} and {@link #BYTES} cover most uses (JSON is a string).
 *
 * @param <T> the result type
 */
public interface ResultCodec<T> {

  /** UTF-8 text. A {@code null} result is rejected with a {@link NullPointerException}. */
  ResultCodec<String> STRING =
      new ResultCodec<>() {
        @Override
        public byte[] encode(String value) {
          return Objects.requireNonNull(value, "result").getBytes(StandardCharsets.UTF_8);
        }

        @Override
        public String decode(byte[] stored) {
          return new String(stored, StandardCharsets.UTF_8);
        }
      };

  /** Bytes as they are (copied). A {@code null} result is rejected. */
  ResultCodec<byte[]> BYTES =
      new ResultCodec<>() {
        @Override
        public byte[] encode(byte[] value) {
          return Objects.requireNonNull(value, "result").clone();
        }

        @Override
        public byte[] decode(byte[] stored) {
          return stored.clone();
        }
      };

  /** The bytes to store for {@code value}. */
  byte[] encode(T value);

  /** The value stored as {@code stored}. */
  T decode(byte[] stored);
}
