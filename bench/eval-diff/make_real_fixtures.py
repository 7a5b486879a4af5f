"""Makes the real-data evaluator fixtures with non-default ks and rank keys (test/eval/fixtures/real/):
records of the official KILT dev files (../shared/data/kilt-dev) and of the real guesses in
../shared/fixtures/eval, reshaped so that sections, paragraph spans, titles and mixed id types are
the units ranked. Deterministic (seeded). The expected outputs come from the official evaluator:
run ../shared/tools/official-eval/run on each case afterwards (bench/eval-diff/README in docs/eval.md).
Python 3 standard library only. Usage: python3 make_real_fixtures.py OUT_DIR"""
import json
import os
import random
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SHARED = os.path.join(HERE, "..", "..", "..", "shared")
FIX = os.path.join(SHARED, "fixtures", "eval")


def read(path, n):
    out = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.strip():
                out.append(json.loads(line))
            if len(out) == n:
                break
    return out


def write(dir_, name, records):
    with open(os.path.join(dir_, name), "w", encoding="utf-8") as f:
        for r in records:
            f.write(json.dumps(r, ensure_ascii=False) + "\n")


def gold_sections(gold):
    """wikipedia_id -> sections cited for it in one gold record."""
    out = {}
    for o in gold["output"]:
        for p in o.get("provenance", []):
            out.setdefault(str(p["wikipedia_id"]), []).append(p.get("section", ""))
    return out


def main(out):
    rnd = random.Random(7)
    n = 25
    hp_gold = read(os.path.join(FIX, "real-hotpotqa-dev-0-1499-para", "gold.jsonl"), n)
    hp_guess = read(os.path.join(FIX, "real-hotpotqa-dev-0-1499-para", "guess.jsonl"), n)
    wow_gold = read(os.path.join(FIX, "real-wow-dev-0-999", "gold.jsonl"), n)
    wow_guess = read(os.path.join(FIX, "real-wow-dev-0-999", "guess.jsonl"), n)
    cases = {}

    # 1. Sections as units: the guess cites the gold's section for most right pages, another for the rest.
    guesses = []
    for g, q in zip(hp_gold, hp_guess):
        secs = gold_sections(g)
        q = json.loads(json.dumps(q))
        for p in q["output"][0]["provenance"]:
            s = secs.get(str(p["wikipedia_id"]))
            p["section"] = rnd.choice(s) if s and rnd.random() < 0.7 else rnd.choice(["Section::::Abstract.", "Section::::Career.", "Section::::Early life."])
        guesses.append(q)
    cases["hotpotqa-section-ks-1-2-3"] = (hp_gold, guesses, [1, 2, 3], ["wikipedia_id", "section"])

    # 2. Paragraph spans: start and end paragraph ids, ks out of order with a large one.
    guesses = []
    for q in hp_guess:
        q = json.loads(json.dumps(q))
        for p in q["output"][0]["provenance"]:
            sp = p.get("start_paragraph_id", 1)
            p["end_paragraph_id"] = sp if rnd.random() < 0.8 else sp + 1
        guesses.append(q)
    cases["hotpotqa-paragraph-span-ks-7-1-3"] = (hp_gold, guesses, [7, 1, 3], ["wikipedia_id", "start_paragraph_id", "end_paragraph_id"])

    # 3. Titles as units, with k beyond the list length.
    cases["hotpotqa-title-ks-1-100"] = (hp_gold, hp_guess, [1, 100], ["title"])

    # 4. Mixed id types: record ids and page ids as ints, padded strings and floats on one side.
    golds, guesses = [], []
    for i, (g, q) in enumerate(zip(wow_gold, wow_guess)):
        g = json.loads(json.dumps(g))
        q = json.loads(json.dumps(q))
        kind = i % 4
        if kind == 0:
            g["id"], q["id"] = 7000 + i, str(7000 + i)
        elif kind == 1:
            g["id"], q["id"] = " %d " % (7000 + i), 7000 + i
        elif kind == 2:
            q["id"] = "\t" + q["id"] + "\n"
        for o in g["output"]:
            for p in o.get("provenance", []):
                if i % 3 == 0:
                    p["wikipedia_id"] = int(p["wikipedia_id"])
        for j, p in enumerate(q["output"][0]["provenance"]):
            w = str(p["wikipedia_id"]).strip()
            p["wikipedia_id"] = [int(w), " %s " % w, w][j % 3]
        golds.append(g)
        guesses.append(q)
    cases["wow-mixed-ids-ks-2-4"] = (golds, guesses, [2, 4], ["wikipedia_id"])

    for name, (gold, guess, ks, rank_keys) in cases.items():
        d = os.path.join(out, name)
        os.makedirs(d, exist_ok=True)
        write(d, "gold.jsonl", gold)
        write(d, "guess.jsonl", guess)
        with open(os.path.join(d, "args.json"), "w") as f:
            json.dump({"ks": ks, "rank_keys": rank_keys}, f)
        print(d)


if __name__ == "__main__":
    main(sys.argv[1])
