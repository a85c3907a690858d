-- A completed on-chain send whose transaction left the best chain carries `leftChainAt` in its
-- dest_details (src/onchain/send-reorgs.ts) until it is mined again. The stuck listing and the
-- svcpay_transactions_stuck gauge (read at every scrape) find those through this index, not by
-- reading every completed send.
CREATE INDEX transactions_left_chain_idx ON transactions (id)
  WHERE kind = 'onchain_send' AND state = 'completed' AND (dest_details->>'leftChainAt') IS NOT NULL;
