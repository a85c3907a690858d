WITH released AS (
         UPDATE holds SET status = 'posted', updated_at = $1 WHERE txn_id = $2 AND status = 'pending'
         RETURNING ledger_account_id, amount),
entry AS (INSERT INTO journal_entries (txn_id, kind, created_at)
         SELECT $2::text, $3::text, $1::int8 WHERE true RETURNING id),
given AS (SELECT * FROM (VALUES ($4::text, $5::text, $6::int8), ($7::text, $8::text, $9::int8), ($10::text, $11::text, $12::int8)) AS v(account, ccy, amount)),
lines AS (INSERT INTO postings (entry_id, ledger_account_id, ccy, amount)
         SELECT entry.id, given.account, given.ccy, given.amount FROM entry, given),
targets AS (
       SELECT id, SUM(posted)::int8 AS posted FROM (
         SELECT * FROM (VALUES ($13::text, $14::int8)) AS d(id, posted) WHERE true UNION ALL 
         SELECT ledger_account_id AS id, 0::int8 AS posted FROM released) t
       GROUP BY id),
wallets_locked AS (
       SELECT la.id FROM ledger_accounts la JOIN targets t ON t.id = la.id
        WHERE la.kind = 'wallet' ORDER BY la.id FOR UPDATE OF la),
wallets_changed AS (
       UPDATE ledger_accounts la
          SET posted = la.posted + t.posted,
              pending = la.pending - COALESCE((SELECT SUM(r.amount) FROM released r WHERE r.ledger_account_id = la.id), 0),
              updated_at = $1
         FROM targets t JOIN wallets_locked l ON l.id = t.id
        WHERE la.id = t.id
        RETURNING la.id) SELECT ledger_require((SELECT count(*) FROM wallets_changed) = (SELECT count(*) FROM targets) AND (SELECT count(*) FROM given JOIN ledger_accounts la ON la.id = given.account AND la.ccy = given.ccy) = 3,
       $15) AS ok

-- $1 = 1767225600000
-- $2 = "txn_0000000000000000000000swap"
-- $3 = "onchain_send"
-- $4 = "wal_btc"
-- $5 = "BTC"
-- $6 = -100500n
-- $7 = "sys:fees:BTC"
-- $8 = "BTC"
-- $9 = 500n
-- $10 = "sys:onchain:BTC"
-- $11 = "BTC"
-- $12 = 100000n
-- $13 = "wal_btc"
-- $14 = -100500n
-- $15 = "journal entry onchain_send posts to an unknown account or in another currency"
