/**
 * `svcpay rails check` for the bitcoind rail: the node's version, chain and sync, a hot wallet
 * that can send and its balance, and a separate key-less watch wallet.
 */
import { asObject } from '../../rails/http-json.js'
import type { Network } from '../../config/network.js'
import type { RailCheckReport } from '../../rails/rail.js'
import { btcToSats, satsToBtcText } from './bitcoind-amount.js'
import type { BitcoindDeps } from './bitcoind-deps.js'
import { call } from './bitcoind-rpc.js'
import { currentRangeEnd, walletInfo } from './bitcoind-watch.js'

/** Bitcoin Core's `getblockchaininfo.chain` names for our networks (src/kernel/chainparams.cpp). */
const CHAIN_NAMES: Record<string, Network> = {
  main: 'mainnet',
  test: 'testnet',
  testnet4: 'testnet',
  signet: 'signet',
  regtest: 'regtest',
}

/** Our name of the network Bitcoin Core calls `chain`, or its own name when we have none. */
export function networkOfChain(chain: unknown): string {
  return CHAIN_NAMES[String(chain)] ?? String(chain)
}

export async function checkBitcoind(deps: BitcoindDeps): Promise<RailCheckReport> {
  const { hotWallet, watchWallet, options } = deps
  const report: RailCheckReport = { rail: 'onchain', adapter: 'bitcoind', reachable: false, problems: [] }
  const problem = (text: string) => report.problems.push(text)
  try {
    const net = asObject(await call(deps, null, 'getnetworkinfo', []), 'getnetworkinfo')
    report.reachable = true
    report.version = `${String(net.subversion ?? '')} (${String(net.version)})`
    if (Number(net.version) < 210000)
      problem(`Bitcoin Core ${String(net.version)} is older than 0.21: descriptor wallets are needed`)
    const chain = asObject(await call(deps, null, 'getblockchaininfo', []), 'getblockchaininfo')
    report.network = networkOfChain(chain.chain)
    if (report.network !== options.network)
      problem(`bitcoind is on ${String(chain.chain)}, the service is configured for ${options.network}`)
    const progress = Number(String(chain.verificationprogress))
    report.synced = chain.initialblockdownload === false && Number(chain.blocks) === Number(chain.headers)
    if (!report.synced)
      problem(
        `bitcoind is not synced: block ${String(chain.blocks)} of ${String(chain.headers)}, verification progress ${(progress * 100).toFixed(2)}%`,
      )
    const hot = await walletInfo(deps, hotWallet)
    if (!hot) problem(`the hot wallet ${hotWallet} is not loaded`)
    else {
      if (hot.private_keys_enabled !== true)
        problem(`the hot wallet ${hotWallet} has no private keys: it cannot send`)
      const balances = asObject(await call(deps, hotWallet, 'getbalances', []), 'getbalances')
      const mine = asObject(balances.mine ?? {}, 'getbalances mine')
      report.balances = { BTC: satsToBtcText(btcToSats(mine.trusted)) }
      if (hot.unlocked_until === 0)
        problem(`the hot wallet ${hotWallet} is locked: sends wait until it is unlocked`)
    }
    if (watchWallet === hotWallet)
      problem(`the watch wallet is the hot wallet ${hotWallet}: use a separate watch-only wallet`)
    const watch = await walletInfo(deps, watchWallet)
    if (!watch)
      problem(
        `the watch wallet ${watchWallet} is not loaded (the rail creates it on first use when it does not exist)`,
      )
    else if (watch.private_keys_enabled !== false)
      problem(`the watch wallet ${watchWallet} has private keys: create it with disable_private_keys=true`)
    // The receive descriptor is imported on the first receive: none yet is not a problem.
    else if (deps.receiveDescriptor) await currentRangeEnd(deps)
  } catch (err) {
    problem(`bitcoind: ${(err as Error).message}`)
  }
  return report
}
