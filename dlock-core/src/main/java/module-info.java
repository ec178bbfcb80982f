/**
 * dlock's core: the lock API ({@code io.dlock}) and the backend SPI ({@code io.dlock.spi}). The
 * implementation ({@code io.dlock.core}) is not exported: applications create clients with {@link
 * io.dlock.LockClients}, and backends see only the SPI.
 */
module io.dlock.core {
  requires java.management; // the holder description names the process (RuntimeMXBean)
  requires org.slf4j;
  requires static org.jspecify;

  exports io.dlock;
  exports io.dlock.spi;

  uses io.dlock.spi.LockBackendProvider;
}
