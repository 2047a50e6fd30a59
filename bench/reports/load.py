"""bench/results/load.json -> the load table of docs/RELIABILITY.md."""

from __future__ import annotations

from bench.reports.text import fmt


def load_table(data: dict) -> str:
    rows = ["| sessions | decisions each | acknowledged | stored | errors | retrain running | click p50 ms "
            "| click p95 ms | click max ms | server p50 ms | server p95 ms | write p95 ms | decisions/s "
            "| load average |",
            "| ---: | ---: | ---: | ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for r in data["runs"]:
        lat = r["latency_ms"]
        server = r.get("server_decision_ms") or {}  # absent in runs before the server logged its time
        write = r.get("server_callback_ms") or {}
        rows.append(f"| {r['sessions']} | {r['decisions_per_session']} | {r['acknowledged']} | {r['stored']} | "
                    f"{r['errors']} | {'yes' if r['retrain_running'] else 'no'} | {fmt(lat['p50'], 0)} | "
                    f"{fmt(lat['p95'], 0)} | {fmt(lat.get('max'), 0)} | {fmt(server.get('p50'), 0)} | "
                    f"{fmt(server.get('p95'), 0)} | {fmt(write.get('p95'), 0)} | {fmt(r.get('decisions_per_s'), 1)} | "
                    f"{fmt(r.get('load_average_1min'), 1)} |")
    c = data["counts"]
    rows += ["", f"Run {data['date']} on a store of {c['documents']:,} abstracts and {c['kb_records']:,} KB records "
                 f"({data['params']['data']} data)."]
    return "\n".join(rows)
