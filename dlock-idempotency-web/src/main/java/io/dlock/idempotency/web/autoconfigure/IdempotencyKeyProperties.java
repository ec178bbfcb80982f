package io.dlock.idempotency.web.autoconfigure;

import io.dlock.idempotency.DedupRecords;
import io.dlock.idempotency.DedupStore;
import io.dlock.idempotency.jdbc.JdbcIdempotencySettings;
import io.dlock.idempotency.web.CallerResolver;
import io.dlock.idempotency.web.IdempotencyKeySettings;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * {@code dlock.idempotency.*}: the {@code Idempotency-Key} filter that {@link
 * IdempotencyKeyAutoConfiguration} registers, and the records it makes over the application's
 * {@code LettuceConnectionFactory} or {@code DataSource}. Unset properties keep {@link
 * IdempotencyKeySettings#defaults()} and the stores' defaults.
 */
@ConfigurationProperties(prefix = "dlock.idempotency")
public class IdempotencyKeyProperties {
  /**
   * Whether to register the filter (with the application's {@code DedupRecords} bean, or records
   * made over its {@code LettuceConnectionFactory} or {@code DataSource}).
   */
  private boolean enabled = true;

  /** The request header that carries the key. */
  private @Nullable String headerName;

  /** The HTTP methods the filter handles. */
  private @Nullable List<String> methods;

  /** The methods for which a request without the header is refused with 400. */
  private @Nullable List<String> requiredMethods;

  /** The response headers stored with the response and replayed. */
  private @Nullable List<String> storedHeaders;

  /** The largest request body the filter reads, in bytes. */
  private @Nullable Integer maxBodyBytes;

  /**
   * The request header naming the caller, whose keys are kept apart from other callers'; unset: the
   * authenticated principal.
   */
  private @Nullable String callerHeader;

  /** The URL patterns the filter applies to. */
  private List<String> urlPatterns = List.of("/*");

  /** The filter's order among the servlet filters (after security, which names the caller). */
  private int order = 0;

  /**
   * Which of the application's beans keeps the records when it has more than one: {@code
   * lettuce-connection-factory} or {@code data-source}.
   */
  private @Nullable String storeBean;

  /**
   * How long a request's claim on its key blocks a retry (answered 409) before it is taken to be
   * abandoned: longer than the slowest request. Unset: 60 s.
   */
  private @Nullable Duration inProgressTimeout;

  /** How long a response is stored and replayed to retries. Unset: 24 h. */
  private @Nullable Duration retention;

  /** Records over the application's {@code LettuceConnectionFactory}. */
  private final Redis redis = new Redis();

  /** Records over the application's {@code DataSource}. */
  private final Jdbc jdbc = new Jdbc();

  /** {@code dlock.idempotency.redis.*}. */
  public static class Redis {
    /** The prefix of the records' Redis keys. Unset: {@code dlock:idem:}. */
    private @Nullable String keyPrefix;

    public @Nullable String getKeyPrefix() {
      return keyPrefix;
    }

    public void setKeyPrefix(@Nullable String keyPrefix) {
      this.keyPrefix = keyPrefix;
    }
  }

  /** {@code dlock.idempotency.jdbc.*}. */
  public static class Jdbc {
    /** The prefix of the tables ({@code prefix + "dedup"}). Unset: {@code dlock_idem_}. */
    private @Nullable String tablePrefix;

    /** Whether to create the tables at start if they do not exist. */
    private boolean createSchema = false;

    public @Nullable String getTablePrefix() {
      return tablePrefix;
    }

    public void setTablePrefix(@Nullable String tablePrefix) {
      this.tablePrefix = tablePrefix;
    }

    public boolean isCreateSchema() {
      return createSchema;
    }

    public void setCreateSchema(boolean createSchema) {
      this.createSchema = createSchema;
    }
  }

  /** The records over {@code store} these properties describe; a bad value names its property. */
  DedupRecords toRecords(DedupStore store) {
    DedupRecords records = DedupRecords.on(store);
    try {
      if (inProgressTimeout != null) {
        records = records.withInProgressTimeout(inProgressTimeout);
      }
      if (retention != null) {
        records = records.withRetention(retention);
      }
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException("dlock.idempotency: " + e.getMessage(), e);
    }
    return records;
  }

  /** The JDBC store's settings these properties describe; a bad value names its property. */
  JdbcIdempotencySettings toJdbcSettings() {
    JdbcIdempotencySettings settings =
        JdbcIdempotencySettings.defaults().withCreateSchema(jdbc.isCreateSchema());
    String tablePrefix = jdbc.getTablePrefix();
    if (tablePrefix != null) {
      try {
        settings = settings.withTablePrefix(tablePrefix);
      } catch (IllegalArgumentException e) {
        throw new IllegalArgumentException("dlock.idempotency.jdbc: " + e.getMessage(), e);
      }
    }
    return settings;
  }

  /**
   * The properties set that only records made by the auto-configuration read: set beside an
   * application's own {@code DedupRecords} bean, they would be ignored.
   */
  List<String> recordProperties() {
    List<String> set = new ArrayList<>();
    if (storeBean != null) {
      set.add("dlock.idempotency.store-bean");
    }
    if (inProgressTimeout != null) {
      set.add("dlock.idempotency.in-progress-timeout");
    }
    if (retention != null) {
      set.add("dlock.idempotency.retention");
    }
    if (redis.getKeyPrefix() != null) {
      set.add("dlock.idempotency.redis.key-prefix");
    }
    if (jdbc.getTablePrefix() != null) {
      set.add("dlock.idempotency.jdbc.table-prefix");
    }
    if (jdbc.isCreateSchema()) {
      set.add("dlock.idempotency.jdbc.create-schema");
    }
    return set;
  }

  /** The settings these properties describe; a bad value names its property. */
  IdempotencyKeySettings toSettings() {
    IdempotencyKeySettings settings = IdempotencyKeySettings.defaults();
    try {
      if (headerName != null) {
        settings = settings.withHeaderName(headerName);
      }
      if (methods != null) {
        settings = settings.withMethods(Set.copyOf(new LinkedHashSet<>(methods)));
      }
      if (requiredMethods != null) {
        settings = settings.withRequiredMethods(Set.copyOf(new LinkedHashSet<>(requiredMethods)));
      }
      if (storedHeaders != null) {
        settings = settings.withStoredHeaders(Set.copyOf(new LinkedHashSet<>(storedHeaders)));
      }
      if (maxBodyBytes != null) {
        settings = settings.withMaxBodyBytes(maxBodyBytes);
      }
      if (callerHeader != null) {
        settings = settings.withCallerResolver(CallerResolver.header(callerHeader));
      }
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException("dlock.idempotency: " + e.getMessage(), e);
    }
    return settings;
  }

  public boolean isEnabled() {
    return enabled;
  }

  public void setEnabled(boolean enabled) {
    this.enabled = enabled;
  }

  public @Nullable String getHeaderName() {
    return headerName;
  }

  public void setHeaderName(@Nullable String headerName) {
    this.headerName = headerName;
  }

  public @Nullable List<String> getMethods() {
    return methods;
  }

  public void setMethods(@Nullable List<String> methods) {
    this.methods = methods;
  }

  public @Nullable List<String> getRequiredMethods() {
    return requiredMethods;
  }

  public void setRequiredMethods(@Nullable List<String> requiredMethods) {
    this.requiredMethods = requiredMethods;
  }

  public @Nullable List<String> getStoredHeaders() {
    return storedHeaders;
  }

  public void setStoredHeaders(@Nullable List<String> storedHeaders) {
    this.storedHeaders = storedHeaders;
  }

  public @Nullable Integer getMaxBodyBytes() {
    return maxBodyBytes;
  }

  public void setMaxBodyBytes(@Nullable Integer maxBodyBytes) {
    this.maxBodyBytes = maxBodyBytes;
  }

  public @Nullable String getCallerHeader() {
    return callerHeader;
  }

  public void setCallerHeader(@Nullable String callerHeader) {
    this.callerHeader = callerHeader;
  }

  public List<String> getUrlPatterns() {
    return urlPatterns;
  }

  public void setUrlPatterns(List<String> urlPatterns) {
    this.urlPatterns = urlPatterns;
  }

  public int getOrder() {
    return order;
  }

  public void setOrder(int order) {
    this.order = order;
  }

  public @Nullable String getStoreBean() {
    return storeBean;
  }

  public void setStoreBean(@Nullable String storeBean) {
    this.storeBean = storeBean;
  }

  public @Nullable Duration getInProgressTimeout() {
    return inProgressTimeout;
  }

  public void setInProgressTimeout(@Nullable Duration inProgressTimeout) {
    this.inProgressTimeout = inProgressTimeout;
  }

  public @Nullable Duration getRetention() {
    return retention;
  }

  public void setRetention(@Nullable Duration retention) {
    this.retention = retention;
  }

  public Redis getRedis() {
    return redis;
  }

  public Jdbc getJdbc() {
    return jdbc;
  }
}
