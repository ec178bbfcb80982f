package io.dlock.idempotency.redis;

import io.lettuce.core.RedisNoScriptException;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.sync.RedisCommands;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;

/**
 * A Lua script kept as a resource, called by its SHA-1 with keys and values always passed as KEYS
 * and ARGV; if the server lost its script cache, the script is loaded again and the call repeated
 * once.
 */
final class RedisScript {
  private final String source;
  private final String sha;
  private final ScriptOutputType type;

  private RedisScript(String source, String sha, ScriptOutputType type) {
    this.source = source;
    this.sha = sha;
    this.type = type;
  }

  static RedisScript load(
      String resource, ScriptOutputType type, RedisCommands<String, String> redis) {
    String source;
    try (InputStream in = RedisScript.class.getResourceAsStream(resource)) {
      if (in == null) {
        throw new IllegalStateException("Missing script resource " + resource);
      }
      source = new String(in.readAllBytes(), StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return new RedisScript(source, redis.digest(source), type);
  }

  <T> T call(RedisCommands<String, String> redis, String key, String... args) {
    String[] keys = {key};
    try {
      return redis.evalsha(sha, type, keys, args);
    } catch (RedisNoScriptException e) {
      redis.scriptLoad(source);
      return redis.evalsha(sha, type, keys, args);
    }
  }
}
