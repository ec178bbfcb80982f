package io.dlock.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import java.sql.SQLException;
import org.junit.jupiter.api.Test;

/**
 * Which errors of the one-statement grant turn it off for good (the server refuses the statement
 * itself, every time) and which are a statement's passing failure, thrown as any other.
 */
class PermitGrantRefusedTest {

  @Test
  void theServersRefusalsOfTheStatementTurnItOff() {
    assertThat(PermitShortcuts.refusesTheStatement(new SQLException("syntax", "42000", 1064)))
        .isTrue();
    assertThat(PermitShortcuts.refusesTheStatement(new SQLException("unsupported", "0A000", 1235)))
        .isTrue();
    assertThat(PermitShortcuts.refusesTheStatement(new SQLException("target table", "HY000", 1093)))
        .isTrue();
    assertThat(PermitShortcuts.refusesTheStatement(new SQLException("wrong usage", "HY000", 1221)))
        .isTrue();
  }

  @Test
  void passingFailuresAndMissingTablesDoNot() {
    assertThat(PermitShortcuts.refusesTheStatement(new SQLException("deadlock", "40001", 1213)))
        .isFalse();
    assertThat(PermitShortcuts.refusesTheStatement(new SQLException("lock wait", "HY000", 1205)))
        .isFalse();
    assertThat(PermitShortcuts.refusesTheStatement(new SQLException("gone", "08S01", 0))).isFalse();
    assertThat(PermitShortcuts.refusesTheStatement(new SQLException("no table", "42S02", 1146)))
        .isFalse();
    assertThat(PermitShortcuts.refusesTheStatement(new SQLException("no state"))).isFalse();
  }
}
