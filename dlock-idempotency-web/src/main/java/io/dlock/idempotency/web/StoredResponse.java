package io.dlock.idempotency.web;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * A response as the filter stores it in a dedup record: the status, the headers that matter, the
 * body. Encoded in a small versioned binary format.
 */
record StoredResponse(int status, List<Map.Entry<String, String>> headers, byte[] body) {
  private static final int FORMAT = 1;

  byte[] encode() {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream(body.length + 128);
    try (DataOutputStream out = new DataOutputStream(bytes)) {
      out.writeByte(FORMAT);
      out.writeShort(status);
      out.writeShort(headers.size());
      for (Map.Entry<String, String> header : headers) {
        out.writeUTF(header.getKey());
        out.writeUTF(header.getValue());
      }
      out.writeInt(body.length);
      out.write(body);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return bytes.toByteArray();
  }

  static StoredResponse decode(byte[] stored) {
    try (DataInputStream in = new DataInputStream(new ByteArrayInputStream(stored))) {
      int format = in.readUnsignedByte();
      if (format != FORMAT) {
        throw new IllegalStateException("Unknown stored response format " + format);
      }
      int status = in.readUnsignedShort();
      int count = in.readUnsignedShort();
      List<Map.Entry<String, String>> headers = new ArrayList<>(count);
      for (int i = 0; i < count; i++) {
        headers.add(Map.entry(in.readUTF(), in.readUTF()));
      }
      byte[] body = new byte[in.readInt()];
      in.readFully(body);
      return new StoredResponse(status, List.copyOf(headers), body);
    } catch (IOException e) {
      throw new IllegalStateException("A stored response is corrupt", e);
    }
  }
}
