"""A short run of bench/bench_serve.py (the figures are `make bench`'s): a few simulated boards
at one action a second each under one `chalk serve`; every action reaches the page's event
stream, and no table is ever shown NOT SCORING meanwhile."""

from bench import bench_serve


def test_every_action_reaches_the_page_and_no_table_is_shown_not_scoring(tmp_path):
    boards, seconds = 3, 5
    done, missing, errors, latencies, alarms = bench_serve.run(boards, tmp_path, seconds)
    assert not errors and not missing, (errors, missing)
    assert done >= boards * (seconds - 1)
    assert not alarms, alarms
    assert len(latencies) == done
