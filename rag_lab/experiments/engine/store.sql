-- The tables of a run directory's run.sqlite (rag_lab/experiments/engine/store.py), created where missing each
-- time a store is opened. Why one sqlite file: docs/cli.md, "Run directories".

-- The resolved sweep (key "plan": JSON of the spec, resolved base config, backend, question ids and candidate
-- ids), its "fingerprint", rag_lab's version, the code version (git commit and a digest of the package
-- sources) and "created_at".
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
-- One row per run (candidate config + seed): its config id, table position, seed, the params the grid set and
-- the full resolved config (JSON). A search adds its runs here as its sampler proposes them (RunStore.add_runs).
CREATE TABLE IF NOT EXISTS candidates (
    candidate_id TEXT PRIMARY KEY,
    config_id    TEXT NOT NULL,
    position     INTEGER NOT NULL,
    seed         INTEGER NOT NULL,
    params       TEXT NOT NULL,
    config       TEXT NOT NULL
);
-- One row per finished (run, question), committed in one transaction with INSERT OR IGNORE: the metrics row
-- (JSON), and the trace and result (zlib-compressed JSON).
CREATE TABLE IF NOT EXISTS rows (
    candidate_id TEXT NOT NULL REFERENCES candidates(candidate_id),
    qid          TEXT NOT NULL,
    row          TEXT NOT NULL,
    trace        BLOB NOT NULL,
    result       BLOB NOT NULL,
    finished_at  REAL NOT NULL,
    PRIMARY KEY (candidate_id, qid)
);
-- Every invocation on the directory: when, which code version, executor and workers, and how many pairs it
-- computed (a resume on changed code is visible here).
CREATE TABLE IF NOT EXISTS sessions (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    started_at  REAL NOT NULL,
    finished_at REAL,
    code        TEXT NOT NULL,
    executor    TEXT NOT NULL,
    workers     INTEGER NOT NULL,
    computed    INTEGER
);
-- A search only: each Optuna trial's number, the run it became, its params, the values told to the sampler and
-- the questions they are means over. Recomputed from the stored rows on a resume, and rewritten identically.
CREATE TABLE IF NOT EXISTS trials (
    number       INTEGER PRIMARY KEY,
    candidate_id TEXT NOT NULL,
    params       TEXT NOT NULL,
    state        TEXT NOT NULL,
    objectives   TEXT NOT NULL,
    n_questions  INTEGER NOT NULL
);
-- Racing only: each raced run's status (survived, dropped), the questions it ran, the rival that dominated it
-- and why, in words and numbers (JSON). Recomputed from the stored rows on a resume, and rewritten identically.
CREATE TABLE IF NOT EXISTS race (
    candidate_id TEXT PRIMARY KEY,
    status       TEXT NOT NULL,
    n_questions  INTEGER NOT NULL,
    rival        TEXT,
    reason       TEXT NOT NULL,
    detail       TEXT NOT NULL
);
