/**
 * `svcpay rails check` for the Ethereum rail: the node answers, is on the configured chain and in
 * sync (`eth_syncing` false, a `finalized` block), the hot wallet holds ETH for gas and USDT, and
 * Tether neither is paused nor has the hot wallet blacklisted; the ETH must cover one transfer at
 * the current gas price (eth_feeHistory, eth_maxPriorityFeePerGas).
 */
import { RailFailure, type RailCheckReport } from '../../rails/rail.js'
import { formatScaled } from '../../shared/amount.js'
import { cleanText, hexQuantity, object } from './jsonrpc-client.js'
import { ethBalance, isBlackListed, tokenPaused, usdtBalanceOf, type EthDeps } from './jsonrpc-deps.js'
import { feeMarket, QUOTE_GAS_LIMIT, suggestedMaxFee } from './jsonrpc-fees.js'
import { checksumAddress } from './jsonrpc-tx.js'

/** Chain ids by the name operators know them. */
const CHAIN_NAMES: Record<string, string> = { '1': 'mainnet', '11155111': 'sepolia', '17000': 'holesky' }

export async function checkEthJsonRpc(deps: EthDeps): Promise<RailCheckReport> {
  const report: RailCheckReport = {
    rail: 'ethereum',
    adapter: 'jsonrpc',
    reachable: false,
    problems: [],
  }
  const problems = report.problems
  let chainId: bigint
  try {
    chainId = hexQuantity(await deps.rpc('eth_chainId', []), 'eth_chainId')
    report.reachable = true
  } catch (err) {
    problems.push(`the node did not answer eth_chainId: ${(err as Error).message}`)
    return report
  }
  const step = async (what: string, run: () => Promise<void>) => {
    try {
      await run()
    } catch (err) {
      problems.push(`${what}: ${(err as Error).message}`)
    }
  }
  report.network = CHAIN_NAMES[chainId.toString()] ?? `chain ${chainId}`
  if (chainId !== deps.chainId)
    problems.push(`the node is on chain ${chainId}, the rail is configured for ${deps.chainId}`)
  await step('version', async () => {
    const version = await deps.rpc('web3_clientVersion', [])
    if (typeof version === 'string') report.version = cleanText(version, 120)
  })
  await step('sync', async () => {
    const syncing = await deps.rpc('eth_syncing', [])
    report.synced = syncing === false
    if (!report.synced) {
      const progress = object(syncing, 'eth_syncing')
      problems.push(
        `the node is syncing (block ${hexQuantity(progress.currentBlock, 'currentBlock')} of ${hexQuantity(progress.highestBlock, 'highestBlock')})`,
      )
    }
    const finalized = await deps.rpc('eth_getBlockByNumber', ['finalized', false]).catch((err: unknown) => {
      // geth answers an error, not null, before its chain has a finalized block (eth/api_backend.go).
      if (err instanceof RailFailure && err.code === 'eth_no_finalized_block') return null
      throw err
    })
    if (finalized === null) problems.push('the node has no finalized block: payouts cannot become final')
  })
  const balances: Record<string, string> = {}
  await step('gas price', async () => {
    const market = await feeMarket(deps)
    const perTransfer = suggestedMaxFee(market) * QUOTE_GAS_LIMIT
    const wei = await ethBalance(deps)
    balances.ETH = formatScaled(wei, 18)
    if (wei < perTransfer)
      problems.push(
        `the hot wallet ${checksumAddress(deps.address)} holds ${balances.ETH} ETH, less than one transfer may cost now ` +
          `(${formatScaled(perTransfer, 18)} ETH at ${formatScaled(market.baseFeePerGas, 9)} gwei base fee)`,
      )
  })
  await step('hot wallet USDT', async () => {
    const held = await usdtBalanceOf(deps, deps.address)
    balances.USDT = formatScaled(held, 6)
    if (held === 0n) problems.push(`the hot wallet ${checksumAddress(deps.address)} holds no USDT`)
  })
  await step('Tether', async () => {
    if (await tokenPaused(deps)) problems.push('Tether has paused USDT transfers')
    if (await isBlackListed(deps, deps.address)) problems.push('Tether has blacklisted the hot wallet')
  })
  if (Object.keys(balances).length > 0) report.balances = balances
  return report
}
