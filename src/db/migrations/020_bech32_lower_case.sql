-- Bitcoin addresses are stored and compared in one spelling: bech32/bech32m in lower case (BIP173
-- also allows the all-upper-case spelling, which QR codes use, for the same script); base58 exactly as
-- given. Before this, an on-chain send to an upper-case address kept it as typed, and the sandbox
-- chain indexed its output under that spelling, where the receiver's watcher never looked. This
-- lower-cases every upper-case bech32 address already stored (mixed case was always refused, and a
-- lower-case or base58 address does not match the pattern), and asks the watcher to look again at
-- every address of ours that was paid under its upper-case spelling, so that the money is credited.

UPDATE transactions
   SET dest_details = jsonb_set(dest_details, '{address}', to_jsonb(lower(dest_details->>'address')))
 WHERE dest_details->>'address' ~ '^(BC|TB|BCRT)1[02-9AC-HJ-NP-Z]+$';

UPDATE transactions
   SET src_details = jsonb_set(src_details, '{address}', to_jsonb(lower(src_details->>'address')))
 WHERE src_details->>'address' ~ '^(BC|TB|BCRT)1[02-9AC-HJ-NP-Z]+$';

UPDATE transactions
   SET rail_ref = lower(rail_ref)
 WHERE kind IN ('onchain_receive', 'deposit') AND rail_ref ~ '^(BC|TB|BCRT)1[02-9AC-HJ-NP-Z]+$';

-- Our own addresses were always derived in lower case; an upper-case row could only collide with its
-- lower-case twin, which is then kept as it is.
UPDATE onchain_addresses a
   SET address = lower(a.address)
 WHERE a.address ~ '^(BC|TB|BCRT)1[02-9AC-HJ-NP-Z]+$'
   AND NOT EXISTS (SELECT 1 FROM onchain_addresses b WHERE b.address = lower(a.address));

UPDATE onchain_deposits
   SET address = lower(address)
 WHERE address ~ '^(BC|TB|BCRT)1[02-9AC-HJ-NP-Z]+$';

-- Only the sandbox chain indexed outputs by spelling (a real node pays and reports the script, so
-- bitcoind and Esplora never lost such a payment). Each address of ours with an output under its
-- upper-case spelling is swept again at once; outputs already recorded are skipped by (txid, vout).
UPDATE onchain_addresses
   SET next_check_at = 0
 WHERE address IN (
   SELECT lower(address) FROM sandbox_chain_outputs WHERE address ~ '^(BC|TB|BCRT)1[02-9AC-HJ-NP-Z]+$'
 );

UPDATE sandbox_chain_outputs
   SET address = lower(address)
 WHERE address ~ '^(BC|TB|BCRT)1[02-9AC-HJ-NP-Z]+$';
