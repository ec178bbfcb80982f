package io.dlock;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

/** {@link LockEventListener#allOf}: several listeners as one. */
class LockEventListenersTest {

  @Test
  void eachListenerIsToldInTurnAndOneThatThrowsDoesNotStopTheOthers() {
    List<String> told = new CopyOnWriteArrayList<>();
    LockEventListener first =
        new LockEventListener() {
          @Override
          public void waitEnded(String lockName, Duration waited) {
            told.add("first " + lockName);
            throw new IllegalStateException("expected by the test");
          }
        };
    LockEventListener second =
        new LockEventListener() {
          @Override
          public void waitEnded(String lockName, Duration waited) {
            told.add("second " + lockName);
          }
        };

    LockEventListener.allOf(first, second).waitEnded("a", Duration.ZERO);

    assertThat(told).containsExactly("first a", "second a");
  }

  @Test
  void noneIsNoneAndOneIsItself() {
    LockEventListener only = new LockEventListener() {};
    assertThat(LockEventListener.allOf()).isSameAs(LockEventListener.NONE);
    assertThat(LockEventListener.allOf(only)).isSameAs(only);
  }
}
