/**
 * The bank partner stand-in's account inquiry (test/standins/bank.ts routes to it), as
 * docs/payouts.md "Account inquiry" defines it: `GET /v1/accounts/{bankBin}/{accountNumber}` ->
 * 200 `{ bankBin, accountNumber, name }`, or 404 `{ error: 'account_not_found' }`.
 *
 * Where the behaviour comes from: the partner asks the beneficiary's bank through NAPAS's account
 * inquiry (the step a Vietnamese banking app takes before showing "Tên người nhận" when a transfer
 * is typed in), which answers the holder's name in upper case without diacritics, and some banks
 * mask part of it. There is no public upstream source or specification to follow: NAPAS's
 * interface is private to its member banks, and each payout partner exposes the inquiry in its own
 * API. The shape here mirrors our partner API (the same authentication, signing and error body as
 * the payout endpoints, which bank.ts checks before routing here); the names are what a tester
 * registers with `setAccount`, written as NAPAS writes them. Failures (5xx, 429, a stall) come
 * from bank.ts's `failNext`, like every other path. Test code only.
 */
export class StandinAccounts {
  private readonly names = new Map<string, string>()
  /** Every inquiry answered, by account number (to check that an inquiry was or was not made). */
  readonly asked: string[] = []

  /** The bank `bankBin` holds account `accountNumber` in the name of `name` (as NAPAS answers it). */
  setAccount(bankBin: string, accountNumber: string, name: string): void {
    this.names.set(`${bankBin}/${accountNumber}`, name)
  }

  /** The answer to an inquiry, or undefined when the request is not one. */
  answer(method: string, path: string): [number, unknown] | undefined {
    const match = /^\/v1\/accounts\/(\d{6})\/(\d{6,19})$/.exec(path)
    if (method !== 'GET' || !match) return undefined
    const [, bankBin, accountNumber] = match as unknown as [string, string, string]
    this.asked.push(accountNumber)
    const name = this.names.get(`${bankBin}/${accountNumber}`)
    if (name === undefined) return [404, { error: 'account_not_found' }]
    return [200, { bankBin, accountNumber, name }]
  }
}
