package io.dlock.bench;

import java.io.IOException;
import java.io.InputStream;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Properties;

/**
 * The versions the report names: the JDK and the client libraries on the class path, then the
 * servers, as each comparison records the one it started or reached.
 */
final class Versions {
  private final Map<String, String> servers = new LinkedHashMap<>();

  void addServer(String name, String version) {
    servers.put(name, version);
  }

  /** {@code name version, name version, ...} in a fixed order: libraries first. */
  String line() {
    Map<String, String> v = new LinkedHashMap<>();
    v.put("JDK", System.getProperty("java.vm.name") + " " + System.getProperty("java.version"));
    v.put("dlock", mavenVersion("io.dlock", "dlock-redis"));
    v.put("Lettuce", mavenVersion("io.lettuce", "lettuce-core"));
    v.put("Redisson", mavenVersion("org.redisson", "redisson"));
    v.put("Curator", mavenVersion("org.apache.curator", "curator-recipes"));
    v.put("ShedLock", mavenVersion("net.javacrumbs.shedlock", "shedlock-provider-jdbc"));
    v.put("PostgreSQL JDBC", org.postgresql.util.DriverInfo.DRIVER_VERSION);
    v.putAll(servers);
    StringBuilder s = new StringBuilder();
    v.forEach((k, val) -> s.append(s.length() == 0 ? "" : ", ").append(k).append(' ').append(val));
    return s.toString();
  }

  /** The version in a jar's Maven metadata, or "?" when the class path has none for it. */
  private static String mavenVersion(String group, String artifact) {
    String path = "/META-INF/maven/" + group + "/" + artifact + "/pom.properties";
    try (InputStream in = Versions.class.getResourceAsStream(path)) {
      if (in == null) {
        return "?";
      }
      Properties p = new Properties();
      p.load(in);
      return p.getProperty("version", "?");
    } catch (IOException e) {
      return "?";
    }
  }
}
