# Run every check of sense_cases on this interpreter; one line per case, then a summary.
# Used by tests/test_sense.py on the MicroPython unix port (it asserts on this output).

import gc

import sense_cases

gc.collect()
import sense_table  # noqa: E402

passed = 0
failed = 0
for name, fn in sense_cases.CASES + sense_table.CASES:
    try:
        fn()
        passed += 1
        print("PASS %s" % name)
    except Exception as e:  # report every case, whatever broke
        failed += 1
        print("FAIL %s: %s %s" % (name, type(e).__name__, e))
print("SUMMARY passed=%d failed=%d" % (passed, failed))
