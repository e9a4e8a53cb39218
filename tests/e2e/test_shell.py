"""End-to-end: the tessera shell as a person uses it, on a terminal (a pty through pexpect), and as tools use it
(-c, -f, standard input; --csv, --json; exit codes).

Every test starts the shell on a temporary data directory that the module fixture fills: a small table `t`, a view,
and two tables whose cross join runs for many seconds (the long query that the progress bar and Ctrl-C tests
interrupt). Each pexpect wait is bounded (TIMEOUT), so a hung shell fails the test instead of stalling it.

Environment: TESSERA_BIN (the shell binary), TESSERA_SERVER_BIN (tessera-server, for --connect).
"""
import csv
import io
import json
import os
import re
import select
import shutil
import signal
import subprocess
import tempfile
import time

import pexpect
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TESSERA = os.environ.get("TESSERA_BIN", os.path.join(ROOT, "build", "cli", "tessera"))
SERVER = os.environ.get("TESSERA_SERVER_BIN", os.path.join(ROOT, "build", "server", "tessera-server"))
TIMEOUT = 60
PROMPT = "tessera> "
# 20 probe blocks x 10000 build rows: 10^9 row pairs, tens of seconds, in 20 work orders (cancel waits for the ones
# in flight).
LONG_QUERY = "SELECT count(*) FROM probe, build WHERE probe.x + build.x = 17;"


def run(data_dir, *args, stdin=None):
    return subprocess.run([TESSERA, data_dir, "--no-sync", *args], input=stdin, capture_output=True, text=True,
                          timeout=TIMEOUT)


@pytest.fixture(scope="module")
def data_dir():
    root = tempfile.mkdtemp(prefix="tessera-shell-")
    numbers = {}
    for count in (5000, 10000):
        numbers[count] = os.path.join(root, f"{count}.csv")
        with open(numbers[count], "w") as out:
            out.writelines(f"{i}\n" for i in range(count))
    directory = os.path.join(root, "db")
    statements = [
        "CREATE TABLE t (a INT, b VARCHAR, c DOUBLE)",
        "INSERT INTO t VALUES (1, 'one', 1.5), (2, NULL, NULL), (30, 'it''s; here', -2.25)",
        "CREATE VIEW big_a AS SELECT a, b FROM t WHERE a > 1",
        "CREATE TABLE build (x BIGINT)",
        f"COPY build FROM '{numbers[10000]}'",
        "CREATE TABLE probe (x BIGINT)",
    ] + [f"COPY probe FROM '{numbers[5000]}'"] * 20
    args = []
    for statement in statements:
        args += ["-c", statement]
    result = run(directory, *args)
    assert result.returncode == 0, result.stderr
    yield directory
    shutil.rmtree(root, ignore_errors=True)


def spawn_shell(args, home):
    """An interactive shell on a 200x50 terminal, with its own home directory (history file)."""
    # The "C" locale on purpose: the shell must still read and show UTF-8 (it switches LC_CTYPE to C.UTF-8).
    env = dict(os.environ, HOME=str(home), TERM="xterm", LC_ALL="C")
    env.pop("TESSERA_HISTORY", None)
    child = pexpect.spawn(TESSERA, args, env=env, encoding="utf-8", timeout=TIMEOUT, dimensions=(50, 200),
                          cwd=str(home))
    child.expect_exact(PROMPT)
    return child


@pytest.fixture
def shell(data_dir, tmp_path):
    child = spawn_shell([data_dir, "--no-sync"], tmp_path)
    yield child
    if child.isalive():
        child.terminate(force=True)


@pytest.fixture
def server(data_dir):
    """A tessera-server on the test data directory, on 127.0.0.1 and a free port; yields HOST:PORT."""
    process = subprocess.Popen([SERVER, "--data", data_dir, "--listen", "127.0.0.1:0", "--no-sync"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    ready, _, _ = select.select([process.stdout], [], [], TIMEOUT)
    line = process.stdout.readline() if ready else ""
    if "listening on" not in line:
        process.kill()
        raise AssertionError(f"server did not start: {line!r}")
    yield "127.0.0.1:" + line.strip().rsplit(":", 1)[1]
    os.kill(process.pid, signal.SIGTERM)
    try:
        process.wait(timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def expect_clean_exit(child):
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0


def quit_shell(child):
    child.sendline("\\q")
    expect_clean_exit(child)


def cancel_long_query(child, progress_bar=True):
    """Runs LONG_QUERY, waits for the progress bar (or, without it, two seconds), presses Ctrl-C and expects the
    cancellation and the next prompt. Returns the text shown before the error."""
    child.sendline(LONG_QUERY)
    if progress_bar:
        child.expect(r"\d+% \[[^\]]*\] HashJoin\w*")  # percentage, bar, the operator running now
    else:
        child.expect_exact(LONG_QUERY)
        with pytest.raises(pexpect.TIMEOUT):
            child.expect(r"\d+% \[", timeout=2)
    child.sendintr()
    child.expect_exact("Error: cancelled (Ctrl-C)")
    shown = child.before
    child.expect_exact(PROMPT)
    return shown


def test_multi_line_statement_with_continuation_prompts(shell):
    shell.sendline("SELECT a, b")
    shell.expect_exact("..> ")
    shell.sendline("FROM t -- a comment; not the end")
    shell.expect_exact("..> ")
    shell.sendline("WHERE b = 'it''s; here'")
    shell.expect_exact("..> ")
    shell.sendline(";")
    shell.expect_exact("(1 row)")
    assert "it's; here" in shell.before
    shell.expect_exact(PROMPT)
    # A string left open gets its own prompt; the ';' inside it does not end the statement.
    shell.sendline("SELECT 'left;")
    shell.expect_exact("'> ")
    shell.sendline("open' AS s;")
    shell.expect_exact("(1 row)")
    assert "left;\\nopen" in shell.before
    shell.expect_exact(PROMPT)
    # Non-ASCII text typed at the prompt arrives intact.
    shell.sendline("SELECT 'é✓' AS s;")
    shell.expect_exact("(1 row)")
    assert "\n é✓" in shell.before.replace("\r", "")
    shell.expect_exact(PROMPT)
    quit_shell(shell)


def test_aligned_output_has_types_right_aligned_numbers_and_dimmed_null(shell):
    shell.sendline("SELECT a, b, c FROM t ORDER BY a;")
    shell.expect_exact("(3 rows)")
    table = shell.before
    assert re.search(r" a +\| b +\| c", table)
    assert re.search(r" INTEGER \| VARCHAR +\| DOUBLE", table)
    assert re.search(r"\n +30 \| it's; here \| +-2\.25", table.replace("\r", ""))  # numbers right-aligned
    assert "\x1b[2mNULL\x1b[0m" in table  # NULL dimmed on a terminal
    shell.expect_exact(PROMPT)
    shell.sendline("\\timing")
    shell.expect_exact("Timing is on.")
    shell.sendline("SELECT 1 AS one;")
    shell.expect(r"\(1 row\)\s+Time: [0-9.e+-]+ ms")
    shell.expect_exact(PROMPT)
    quit_shell(shell)


def test_progress_bar_shows_on_a_long_query_and_is_cleared(shell):
    shown = cancel_long_query(shell)
    # The line was erased (carriage return + erase to end of line) before the error was printed.
    assert shown.rstrip(" ").endswith("\r\x1b[K")
    # \progress turns it off: the same query shows no bar before Ctrl-C.
    shell.sendline("\\progress")
    shell.expect_exact("Progress bar is off.")
    shell.expect_exact(PROMPT)
    cancel_long_query(shell, progress_bar=False)
    quit_shell(shell)


@pytest.mark.skipif(shutil.which("strace") is None, reason="needs strace (scripts/install_deps.sh installs it)")
def test_keys_typed_as_the_prompt_appears_reach_the_editor(data_dir, tmp_path):
    """A key typed the moment the prompt shows must meet the line editor, not the terminal's cooked mode: there a
    Ctrl-D becomes a pending end-of-file that raw mode delivers as a NUL byte, and the shell did not exit (a CI run
    hung on it). strace holds every terminal ioctl for 0.3 s, so a Ctrl-D sent on seeing the prompt lands before
    any mode switch that comes after the prompt is drawn."""
    env = dict(os.environ, HOME=str(tmp_path), TERM="xterm", LC_ALL="C")
    env.pop("TESSERA_HISTORY", None)
    child = pexpect.spawn("strace", ["-f", "-o", "/dev/null", "-e", "trace=ioctl", "-e",
                                     "inject=ioctl:delay_enter=300000", TESSERA, data_dir, "--no-sync"],
                          env=env, encoding="utf-8", timeout=TIMEOUT, dimensions=(50, 200), cwd=str(tmp_path))
    try:
        child.expect_exact(PROMPT)
        child.sendline("SELECT 8 AS eight;")
        child.expect_exact("(1 row)")
        child.expect_exact(PROMPT)
        child.sendeof()
        expect_clean_exit(child)
    finally:
        if child.isalive():
            child.terminate(force=True)


def test_ctrl_c_cancels_the_running_query_and_the_shell_goes_on(shell):
    cancel_long_query(shell)
    shell.sendline("SELECT count(*) FROM build;")
    shell.expect_exact("10000")
    shell.expect_exact(PROMPT)
    # Ctrl-C at the prompt drops the line typed so far (and a pending multi-line statement).
    shell.send("SELECT 'half typed")
    # Ctrl-C once the editor has the characters (its echo): a SIGINT that races the typing makes the terminal
    # discard the characters still queued, a case no typist produces.
    shell.expect_exact("half typed")
    shell.sendintr()
    shell.expect_exact(PROMPT)
    shell.sendline("SELECT 7")
    shell.expect_exact("..> ")
    shell.sendintr()
    shell.expect_exact(PROMPT)
    shell.sendline("SELECT 8 AS eight;")
    shell.expect_exact("(1 row)")
    assert "eight" in shell.before and "half typed" not in shell.before.split("eight")[0].split("\n")[-1]
    shell.expect_exact(PROMPT)
    # Ctrl-D at an empty prompt exits with status 0.
    shell.sendeof()
    expect_clean_exit(shell)


def test_tab_completes_keywords_and_names(shell):
    shell.sendline("CREATE TABLE completion_test (long_column_name INT);")
    shell.expect_exact(PROMPT)
    shell.send("sel\t")  # a keyword, in the case typed
    shell.send("long_c\t")  # a column name
    shell.send("FROM completion_t\t")  # a table name
    shell.sendline(";")
    shell.expect_exact("(0 rows)")
    assert re.search(r" long_column_name\s+INTEGER", shell.before)
    shell.expect_exact(PROMPT)
    # Several matches: Tab lists them and redraws the line.
    shell.send("SELECT 1 AS a FROM build WHERE 1 IN\t")
    shell.expect_exact("INNER  INSERT  INTEGER  INTERVAL  INTO")
    shell.expect_exact("WHERE 1 IN")
    shell.sendline(" (1);")
    shell.expect_exact("(10000 rows, 40 shown)")
    shell.expect_exact(PROMPT)
    shell.sendline("DROP TABLE completion_test;")
    shell.expect_exact("DROP TABLE")
    quit_shell(shell)


def test_describe_meta_commands(shell):
    shell.sendline("\\d")
    shell.expect_exact("(4 rows)")
    listing = shell.before
    for name, kind in [("big_a", "view"), ("build", "table"), ("probe", "table"), ("t", "table")]:
        assert re.search(rf"\b{name}\s+\| {kind}\b", listing), (name, listing)
    shell.sendline("\\dt")
    shell.expect_exact("(3 rows)")
    assert "big_a" not in shell.before
    shell.sendline("\\d t")
    shell.expect_exact("(3 rows)")
    assert re.search(r"\bb\s+\| VARCHAR", shell.before)
    shell.sendline("\\d big_a")
    shell.expect_exact("(2 rows)")
    shell.sendline("\\nope")
    shell.expect_exact("Error: unknown meta-command \\nope (\\? lists them)")
    shell.sendline("\\?")
    shell.expect_exact("\\o [FILE]")
    shell.expect_exact(PROMPT)
    quit_shell(shell)


def test_errors_show_the_message_with_its_caret(shell):
    shell.sendline("SELECT a FROM t WHERE a = = 1;")
    shell.expect_exact("Error: syntax error at line 1, column 27")
    shell.expect_exact(PROMPT)
    lines = [line for line in shell.before.replace("\r", "").split("\n") if line.strip()]
    source, caret = lines[-2], lines[-1]
    assert source.strip() == "SELECT a FROM t WHERE a = = 1;"
    assert caret.strip() == "^" and caret.index("^") == source.index("= 1")
    shell.sendline("SELECT nope FROM t;")
    shell.expect_exact("Error: ")
    shell.expect_exact("^")
    assert "nope" in shell.before
    shell.expect_exact(PROMPT)
    # The shell goes on after errors.
    shell.sendline("SELECT 5 AS five;")
    shell.expect_exact("(1 row)")
    quit_shell(shell)


def test_output_to_a_file_and_including_a_file(shell, tmp_path):
    out = tmp_path / "out.txt"
    shell.sendline(f"\\o {out}")
    shell.expect_exact(PROMPT)
    shell.sendline("SELECT b FROM t WHERE a = 1;")
    shell.expect_exact(PROMPT)
    assert "one" not in shell.before  # went to the file
    shell.sendline("\\o")
    shell.expect_exact(PROMPT)
    shell.sendline("SELECT 'back' AS where_to;")
    shell.expect_exact("back")
    shell.expect_exact(PROMPT)
    text = out.read_text()
    assert "one" in text and "(1 row)" in text and "\x1b" not in text and "back" not in text

    script = tmp_path / "script.sql"
    script.write_text("SELECT 40 + 2 AS answer;\n\\dt\nSELECT 'a;b'\n  AS s;\n")
    shell.sendline(f"\\i {script}")
    shell.expect_exact("42")
    shell.expect_exact("(3 rows)")
    shell.expect_exact("a;b")
    shell.expect_exact(PROMPT)
    shell.sendline(f"\\i {tmp_path / 'missing.sql'}")
    shell.expect_exact("Error: cannot read")
    shell.expect_exact(PROMPT)
    quit_shell(shell)


def test_history_is_saved_one_entry_per_statement(shell, tmp_path):
    shell.sendline("SELECT 1")
    shell.expect_exact("..> ")
    shell.sendline("  AS x;")
    shell.expect_exact("(1 row)")
    shell.sendline("\\dt")
    shell.expect_exact("(3 rows)")
    quit_shell(shell)
    # libedit writes entries vis(3)-encoded: "\\040" for a space, "\\134" for a backslash.
    assert (tmp_path / ".tessera_history").stat().st_mode & 0o777 == 0o600
    history = (tmp_path / ".tessera_history").read_text().replace("\\040", " ").replace("\\134", "\\")
    entries = history.splitlines()[1:]
    assert entries == ["SELECT 1   AS x;", "\\dt", "\\q"]


def test_json_and_csv_output(data_dir):
    result = run(data_dir, "--json", "-c", "SELECT a, b, c FROM t ORDER BY a")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == [
        {"a": 1, "b": "one", "c": 1.5},
        {"a": 2, "b": None, "c": None},
        {"a": 30, "b": "it's; here", "c": -2.25},
    ]
    result = run(data_dir, "--csv", "-c", "SELECT a, b, c FROM t ORDER BY a")
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[0] == "a,b,c"
    assert list(csv.reader(io.StringIO(result.stdout))) == [
        ["a", "b", "c"], ["1", "one", "1.5"], ["2", "", ""], ["30", "it's; here", "-2.25"]]
    # --csv --timing, as the benchmark runner reads it: header, rows, a Time line per statement.
    result = run(data_dir, "--csv", "--timing", "-c", "SELECT 1 AS x; CREATE VIEW v_tmp AS SELECT 1 AS y",
                 "-c", "DROP VIEW v_tmp")
    lines = result.stdout.splitlines()
    assert lines[0:2] == ["x", "1"] and lines[3] == "CREATE VIEW" and lines[5] == "DROP VIEW"
    assert all(re.fullmatch(r"Time: [0-9.e+-]+ ms", lines[i]) for i in (2, 4, 6))


def test_exit_codes_of_scripts(data_dir, tmp_path):
    assert run(data_dir, "-c", "SELECT 1").returncode == 0
    failed = run(data_dir, "--csv", "-c", "SELECT 1 AS first", "-c", "SELECT nope FROM t", "-c", "SELECT 3 AS third")
    assert failed.returncode == 1
    assert "first" in failed.stdout and "third" not in failed.stdout
    assert failed.stderr.startswith("Error: ") and "nope" in failed.stderr

    script = tmp_path / "s.sql"
    script.write_text("SELECT 1 AS first;\nSELEC 2;\nSELECT 3 AS third;\n")
    result = run(data_dir, "--csv", "-f", str(script))
    assert result.returncode == 1 and "first" in result.stdout and "third" not in result.stdout
    # Script errors say where the failing statement starts: FILE:LINE.
    assert f"Error: {script}:2: syntax error at line 1, column 1" in result.stderr and "^" in result.stderr

    # Standard input that is not a terminal is a script too; a last statement without ';' runs at the end.
    result = run(data_dir, "--csv", stdin="SELECT 1 AS a;\n\\dt\nSELECT 2 AS b")
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[0:2] == ["a", "1"] and result.stdout.splitlines()[-2:] == ["b", "2"]
    result = run(data_dir, stdin="SELECT 1;\nSELECT 2; SELECT *\n  FROM missing;\n")
    assert result.returncode == 1 and result.stderr.startswith("Error: <stdin>:2: ")
    assert run(data_dir, "-c", "\\nope").returncode == 1
    assert run(data_dir, "-f", str(tmp_path / "missing.sql")).returncode == 1
    assert run(data_dir, "--bogus").returncode == 2
    # Flags are gflags: --flag=value works, a bad value or a flag without its value is a usage error (2), and -c /
    # -f keep their order even around flags that take a value.
    result = run(data_dir, "--threads=1", "-c", "SELECT 1 AS one", "--token", "-c", "-c", "SELECT 2 AS two")
    assert result.returncode == 2 and "--token and --tls-ca need --connect" in result.stderr, result.stderr
    result = run(data_dir, "--csv", "-c", "SELECT 1 AS one", "--threads=1", "-c", "SELECT 2 AS two")
    assert result.returncode == 0 and result.stdout.splitlines() == ["one", "1", "two", "2"], result.stderr
    for bad in (["--threads", "0"], ["--threads", "many"], ["--csv", "--json"], ["-c"], ["--policy", "nope"]):
        refused = run(data_dir, *bad)
        assert refused.returncode == 2 and "usage: tessera" in refused.stderr, (bad, refused.stderr)
    # --help: the shell's own flags and the database ones, from gflags, exit status 0.
    shown = subprocess.run([TESSERA, "--help"], capture_output=True, text=True, timeout=TIMEOUT)
    assert shown.returncode == 0 and "usage: tessera" in shown.stdout
    assert "--no-progress" in shown.stdout and "--memory-limit" in shown.stdout and "--logtostderr" not in shown.stdout
    # \q in a script stops it, successfully.
    result = run(data_dir, "--csv", stdin="SELECT 1 AS a;\n\\q\nSELECT nope;\n")
    assert result.returncode == 0 and "nope" not in result.stderr


def test_ctrl_c_in_a_script_cancels_the_statement_and_the_script_fails(data_dir):
    process = subprocess.Popen([TESSERA, data_dir, "--no-sync", "--csv", "-c", "SELECT 1 AS started",
                                "-c", LONG_QUERY, "-c", "SELECT 1 AS after"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        ready, _, _ = select.select([process.stdout], [], [], TIMEOUT)
        assert ready and process.stdout.readline() == "started\n"
        time.sleep(0.5)  # into the long query (it runs for tens of seconds)
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=TIMEOUT)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert process.returncode == 1
    assert "Error: cancelled (Ctrl-C)" in err
    assert "after" not in out


def test_without_a_data_directory_a_temporary_one_is_used():
    result = subprocess.run([TESSERA, "--csv", "-c", "CREATE TABLE x (a INT); INSERT INTO x VALUES (4)",
                             "-c", "SELECT a FROM x"], capture_output=True, text=True, timeout=TIMEOUT)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[-2:] == ["a", "4"]


def test_connect_to_a_server(server, tmp_path):
    result = subprocess.run([TESSERA, "--connect", server, "--csv", "-c", "SELECT count(*) AS n FROM build"],
                            capture_output=True, text=True, timeout=TIMEOUT)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == ["n", "10000"]
    result = subprocess.run([TESSERA, "--connect", server, "-c", "SELECT a FROM t WHERE a = = 1"],
                            capture_output=True, text=True, timeout=TIMEOUT)
    assert result.returncode == 1
    assert "syntax error at line 1, column 27" in result.stderr and "^" in result.stderr
    # Interactive through the server: meta-commands, the progress bar and Ctrl-C work the same.
    child = spawn_shell(["--connect", server], tmp_path)
    child.sendline("\\dt")
    child.expect_exact("(3 rows)")
    cancel_long_query(child)
    child.sendline("SELECT count(*) FROM probe;")
    child.expect_exact("100000")
    quit_shell(child)
    # A server that is not there: a clear error, exit status 1.
    result = subprocess.run([TESSERA, "--connect", "127.0.0.1:1", "-c", "SELECT 1"], capture_output=True,
                            text=True, timeout=TIMEOUT)
    assert result.returncode == 1 and "cannot connect to 127.0.0.1:1" in result.stderr
