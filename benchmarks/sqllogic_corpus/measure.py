#!/usr/bin/env python3
"""Generates the select1-select5 recreation and runs it through tessera_sqllogictest: a pass-rate table.

    python3 benchmarks/sqllogic_corpus/measure.py [--runner build/tests/sqllogictest/tessera_sqllogictest]
                                                   [--seed N] [--scale F] [--keep DIR]

Prints one line per file (records, passed, failed, percent, seconds) and the most frequent failure messages.
"""
import argparse
import collections
import pathlib
import re
import subprocess
import sys
import tempfile
import time

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent.parent


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[1])
    parser.add_argument('--runner', default=str(ROOT / 'build/tests/sqllogictest/tessera_sqllogictest'))
    parser.add_argument('--seed', type=int, default=1)
    parser.add_argument('--scale', type=float, default=1.0)
    parser.add_argument('--keep', help='write the generated files here instead of a temporary directory')
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as temporary:
        out = pathlib.Path(args.keep or temporary)
        subprocess.run([sys.executable, str(HERE / 'generate_select_corpus.py'), str(out), '--seed',
                        str(args.seed), '--scale', str(args.scale)], check=True, stdout=subprocess.DEVNULL)
        messages = collections.Counter()
        total_passed = total_records = 0
        print(f'{"file":<14}{"records":>9}{"passed":>9}{"failed":>9}{"pass %":>9}{"seconds":>9}')
        for name in ['select1', 'select2', 'select3', 'select4', 'select5']:
            start = time.monotonic()
            run = subprocess.run([args.runner, str(out / f'{name}.test')], capture_output=True, text=True)
            seconds = time.monotonic() - start
            summary = re.search(r'^(\d+) passed, (\d+) failed$', run.stdout + run.stderr, re.M)
            if summary is None:
                print(f'{name}: no summary from the runner (exit {run.returncode})', file=sys.stderr)
                return 1
            passed, failed = int(summary.group(1)), int(summary.group(2))
            total_passed += passed
            total_records += passed + failed
            for line in (run.stdout + run.stderr).splitlines():
                match = re.match(r'^\S+\.test:\d+: (.*?)( at line \d+, column \d+)?$', line)
                if match:
                    messages[match.group(1)[:120]] += 1
            print(f'{name:<14}{passed + failed:>9}{passed:>9}{failed:>9}'
                  f'{100.0 * passed / max(1, passed + failed):>9.1f}{seconds:>9.1f}')
        print(f'{"all":<14}{total_records:>9}{total_passed:>9}{total_records - total_passed:>9}'
              f'{100.0 * total_passed / max(1, total_records):>9.1f}')
        for message, count in messages.most_common(10):
            print(f'{count:>6}  {message}')
    return 0


if __name__ == '__main__':
    sys.exit(main())
