// The PostgreSQL JDBC driver against tessera-server --pg-listen (run by tests/e2e/test_pgwire.py with the driver's
// jar on the class path): a plain query, a prepared statement run often enough to become a named server-side
// statement, every type read back, a SQLSTATE. Prints "JDBC OK" and exits 0, or throws.
//
//   java -cp postgresql.jar JdbcSmoke.java PORT PASSWORD

import java.math.BigDecimal;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Properties;

public class JdbcSmoke {
  static void check(boolean condition, String what) {
    if (!condition) throw new AssertionError(what);
  }

  public static void main(String[] args) throws Exception {
    Properties properties = new Properties();
    properties.setProperty("user", "jdbc");
    properties.setProperty("password", args[1]);
    String url = "jdbc:postgresql://127.0.0.1:" + args[0] + "/tpch";
    try (Connection connection = DriverManager.getConnection(url, properties)) {
      check(connection.getMetaData().getDatabaseProductVersion().startsWith("15"), "server version");
      try (Statement statement = connection.createStatement();
           ResultSet rows = statement.executeQuery(
               "SELECT r_regionkey, r_name FROM region ORDER BY r_regionkey")) {
        int count = 0;
        while (rows.next()) {
          check(rows.getInt(1) == count, "region key");
          count++;
        }
        check(count == 5, "5 regions");
      }
      try (PreparedStatement statement = connection.prepareStatement(
               "SELECT n_name, n_regionkey FROM nation WHERE n_nationkey = ? AND n_name <> ?")) {
        for (int key = 0; key < 8; key++) {  // the driver prepares a named statement from the 5th run on
          statement.setInt(1, key);
          statement.setString(2, "it's not a name");
          try (ResultSet rows = statement.executeQuery()) {
            check(rows.next(), "nation " + key);
            check(!rows.getString(1).isEmpty(), "name");
            check(!rows.next(), "one row");
          }
        }
      }
      try (PreparedStatement statement = connection.prepareStatement(
               "SELECT l_quantity, l_extendedprice, l_shipdate, l_returnflag, l_comment FROM lineitem "
               + "WHERE l_orderkey = ? AND l_extendedprice > ? ORDER BY l_linenumber")) {
        statement.setLong(1, 1);
        statement.setBigDecimal(2, new BigDecimal("0.00"));
        try (ResultSet rows = statement.executeQuery()) {
          check(rows.next(), "lineitem of order 1");
          check(rows.getBigDecimal(1).scale() == 2, "decimal scale");
          check(rows.getDate(3) != null, "date");
          check(rows.getString(4).length() == 1, "char(1)");
        }
      }
      try (Statement statement = connection.createStatement()) {
        statement.executeQuery("SELECT no_such_column FROM nation");
        throw new AssertionError("no error");
      } catch (SQLException e) {
        check("42703".equals(e.getSQLState()), "SQLSTATE " + e.getSQLState());
      }
    }
    System.out.println("JDBC OK");
  }
}
