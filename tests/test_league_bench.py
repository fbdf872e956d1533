"""`make bench`'s league figures, run short so the bench cannot break unseen (its figures are
printed by `make bench`, never asserted here: a busy machine is no bug)."""


def test_the_league_bench_runs(capsys):
    from bench import bench_league

    rate, latency = bench_league.main(smoke=True)
    out = capsys.readouterr().out
    assert "games verified, filed, acknowledged and ranked" in out
    assert "to the league's standings" in out
    assert rate > 0 and latency and all(t > 0 for t in latency)
