/**
 * Which mempool refusals say a transaction can never confirm, and which only say "not now".
 * Bitcoin Core's reject reasons (src/validation.cpp, src/policy/*): a fee below the mempool's or
 * the relay minimum, a conflict with another mempool transaction, a full mempool or a too-long
 * chain of unconfirmed parents all pass with time or a fee bump; and other nodes, to which the
 * transaction may already have been relayed, can still hold it and a miner still include it. A
 * transaction refused for such a reason after it was once accepted must not be treated as dead.
 * Everything else (non-standard scripts, size, dust, inputs spent in the chain) is the same on
 * every node.
 */
const PASSING =
  /fee|mempool-conflict|mempool full|too-long-mempool-chain|too-many-unconfirmed|replacement|rbf|insufficient priority/i

/** True when the refusal may pass: the transaction may still confirm, here or elsewhere. */
export function isPassingRefusal(reason: string): boolean {
  return PASSING.test(reason)
}

/**
 * An input the node's UTXO set and mempool lack: sendrawtransaction's -25
 * "bad-txns-inputs-missingorspent", testmempoolaccept's "missing-inputs". Bitcoin Core gives it
 * both for an input spent in the chain and for a parent it does not hold ("assume this might be
 * an orphan tx", src/validation.cpp, PreChecks), such as the unconfirmed change of a parent its
 * mempool evicted, which other nodes may still mine with the child. The refusal alone never says
 * the transaction is dead: the wallet's view of conflicts, or the chain's, decides.
 */
export function isMissingInputs(reason: string): boolean {
  return /missing-inputs|inputs-missingorspent/i.test(reason)
}
