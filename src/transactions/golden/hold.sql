hold_wallet AS (
       UPDATE ledger_accounts SET pending = pending + $1, updated_at = $2
        WHERE account_id = $3 AND ccy = $4 AND kind = 'wallet'
          AND posted - pending >= $1
        RETURNING id),
     hold_row AS (
       INSERT INTO holds (txn_id, ledger_account_id, amount, status, created_at, updated_at)
       SELECT $5, hold_wallet.id, $1, 'pending', $2, $2 FROM hold_wallet)

-- $1 = 100500n
-- $2 = 1767225600000
-- $3 = "acc_00000000000000000000000001"
-- $4 = "BTC"
-- $5 = "txn_0000000000000000000000swap"
