"""Give a scripted store's judgments mid-scale, field-specific scores (deterministic).

Usage: python make_mid_scale.py STORE RUBRICS_DIR
"""

import hashlib
import json
import sqlite3
import sys
from pathlib import Path

import yaml


def main(store: str, rubrics_dir: str) -> None:
    ranges = {}
    for md in Path(rubrics_dir).glob("*.md"):
        meta = yaml.safe_load(md.read_text().split("---")[1])
        ranges[meta["id"]] = meta["fields"]
    con = sqlite3.connect(store)
    rows = con.execute("select id, item_id, rubric_id, scores_json, raw_reply from judgments")
    for jid, item_id, rubric_id, scores_json, raw in rows.fetchall():
        scores = json.loads(scores_json)
        for name, spec in ranges[rubric_id].items():
            h = int(hashlib.sha256(f"{item_id}:{name}".encode()).hexdigest(), 16)
            if spec["type"] == "integer":
                low, high = spec.get("minimum", 0), spec.get("maximum", 10)
                scores[name] = low + h % (high - low + 1)
            elif spec["type"] == "boolean":
                scores[name] = bool(h % 3)
        reply = json.loads(raw)
        reply.update(scores)
        con.execute(
            "update judgments set scores_json=?, raw_reply=? where id=?",
            (json.dumps(scores), json.dumps(reply), jid),
        )
    con.commit()
    con.execute("vacuum")
    con.close()


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
