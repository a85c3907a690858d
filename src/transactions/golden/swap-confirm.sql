WITH quoted_txn AS (
       SELECT t.id FROM transactions t
        WHERE t.id = $1 AND t.account_id = $2 AND t.state = 'quoted'
          AND t.expires_at > $3 AND t.src_amount = $4
          AND t.src_fee = $5 AND t.src_network_fee = $6
          AND t.dest_amount = $7
          AND EXISTS (SELECT 1 FROM holds h WHERE h.txn_id = t.id AND h.status = 'pending')
        FOR UPDATE OF t), released AS (
         UPDATE holds SET status = 'posted', updated_at = $8 WHERE txn_id = $9 AND status = 'pending' AND EXISTS (SELECT 1 FROM quoted_txn)
         RETURNING ledger_account_id, amount),
entry AS (INSERT INTO journal_entries (txn_id, kind, created_at)
         SELECT $9::text, $10::text, $8::int8 WHERE true AND EXISTS (SELECT 1 FROM quoted_txn) RETURNING id),
given AS (SELECT * FROM (VALUES ($11::text, $12::text, $13::int8), ($14::text, $15::text, $16::int8), ($17::text, $18::text, $19::int8), ($20::text, $21::text, $22::int8), ($23::text, $24::text, $25::int8)) AS v(account, ccy, amount)),
lines AS (INSERT INTO postings (entry_id, ledger_account_id, ccy, amount)
         SELECT entry.id, given.account, given.ccy, given.amount FROM entry, given),
targets AS (
       SELECT id, SUM(posted)::int8 AS posted FROM (
         SELECT * FROM (VALUES ($26::text, $27::int8), ($28::text, $29::int8)) AS d(id, posted) WHERE true AND EXISTS (SELECT 1 FROM quoted_txn) UNION ALL 
         SELECT ledger_account_id AS id, 0::int8 AS posted FROM released) t
       GROUP BY id),
wallets_locked AS (
       SELECT la.id FROM ledger_accounts la JOIN targets t ON t.id = la.id
        WHERE la.kind = 'wallet' ORDER BY la.id FOR UPDATE OF la),
wallets_changed AS (
       UPDATE ledger_accounts la
          SET posted = la.posted + t.posted,
              pending = la.pending - COALESCE((SELECT SUM(r.amount) FROM released r WHERE r.ledger_account_id = la.id), 0),
              updated_at = $8
         FROM targets t JOIN wallets_locked l ON l.id = t.id
        WHERE la.id = t.id
        RETURNING la.id), changed AS (UPDATE transactions SET state = $30, updated_at = $31, src_updated_at = $31, dest_updated_at = $31, next_check_at = NULL WHERE id = $32 AND state = $33 AND EXISTS (SELECT 1 FROM quoted_txn) RETURNING *),
     event AS (
       INSERT INTO events (txn_id, account_id, txn_state, msg, ext_ref_id, updated_at, created_at)
       SELECT id, account_id, state, msg, COALESCE(ext_ref_id, ''), updated_at, $34 FROM changed
       RETURNING id, account_id),
     delivery AS (
       INSERT INTO webhook_deliveries (event_id, webhook_id, status, next_attempt_at, created_at, updated_at)
       SELECT event.id, w.id, 'pending', $34, $34, $34
         FROM event JOIN webhooks w ON w.account_id = event.account_id AND w.deleted_at IS NULL
        WHERE $35::boolean
       RETURNING id)
     SELECT ledger_require((SELECT count(*) FROM wallets_changed) = (SELECT count(*) FROM targets) AND (SELECT count(*) FROM given JOIN ledger_accounts la ON la.id = given.account AND la.ccy = given.ccy) = 5,
       $36) AND ledger_require((SELECT count(*) FROM changed) = (SELECT count(*) FROM quoted_txn),
       $37) AS checked, changed.*, (SELECT count(*) FROM delivery)::int AS enqueued
       FROM (SELECT 1) AS one LEFT JOIN changed ON true

-- $1 = "txn_0000000000000000000000swap"
-- $2 = "acc_00000000000000000000000001"
-- $3 = 1767225600000
-- $4 = 100000n
-- $5 = 500n
-- $6 = 0n
-- $7 = 9500n
-- $8 = 1767225600000
-- $9 = "txn_0000000000000000000000swap"
-- $10 = "swap"
-- $11 = "wal_btc"
-- $12 = "BTC"
-- $13 = -100500n
-- $14 = "sys:fees:BTC"
-- $15 = "BTC"
-- $16 = 500n
-- $17 = "sys:fx:BTC"
-- $18 = "BTC"
-- $19 = 100000n
-- $20 = "sys:fx:USD"
-- $21 = "USD"
-- $22 = -9500n
-- $23 = "wal_usd"
-- $24 = "USD"
-- $25 = 9500n
-- $26 = "wal_btc"
-- $27 = -100500n
-- $28 = "wal_usd"
-- $29 = 9500n
-- $30 = "completed"
-- $31 = 1767225600000
-- $32 = "txn_0000000000000000000000swap"
-- $33 = "quoted"
-- $34 = 1767225600000
-- $35 = true
-- $36 = "journal entry swap posts to an unknown account or in another currency"
-- $37 = "confirm of swap changed the transaction and its entry together"
