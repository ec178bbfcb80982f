package io.dlock.spi;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.ConnectException;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import org.junit.jupiter.api.Test;

class FailuresTest {

  @Test
  void unwrap_removesEveryFutureWrapper_andKeepsOtherCauses() {
    IOException io = new IOException("reset", new ConnectException("refused"));
    Throwable wrapped = new CompletionException(new ExecutionException(io));
    assertThat(Failures.unwrap(wrapped)).isSameAs(io);
    assertThat(Failures.unwrap(io)).isSameAs(io);
    CompletionException empty = new CompletionException("no cause", null);
    assertThat(Failures.unwrap(empty)).isSameAs(empty);
  }

  @Test
  void describe_addsTheRootCausesMessage_onlyWhenThereIsOne() {
    ConnectException root = new ConnectException("Connection refused");
    IOException io = new IOException("Unable to connect", new RuntimeException("wrapper", root));
    assertThat(Failures.rootCause(io)).isSameAs(root);
    assertThat(Failures.describe(io)).isEqualTo("Unable to connect (Connection refused)");
    assertThat(Failures.describe(root)).isEqualTo("Connection refused");
  }
}
