import { Type } from 'typebox'

/** A bank a fiat payout can go to. */
export const InstitutionSchema = Type.Object(
  {
    code: Type.String({
      description: 'The NAPAS BIN (six digits); send it as destReq.reqDetails.institutionCode',
    }),
    name: Type.String({ description: "The bank's full name" }),
    shortName: Type.String({ description: 'The name the bank is known by' }),
  },
  {
    examples: [
      {
        code: '970436',
        name: 'Joint Stock Commercial Bank for Foreign Trade of Vietnam',
        shortName: 'Vietcombank',
      },
    ],
  },
)

const CodeTable = (what: string) =>
  Type.Array(Type.Object({ code: Type.Integer(), label: Type.String() }), { description: what })

/** The code tables of a payout's sourceOfFunds. */
export const SourceOfFundsCodesSchema = Type.Object(
  {
    purpose: CodeTable('Why the money is sent'),
    source: CodeTable("Where the sender's money came from"),
    relationship: CodeTable('How the sender is related to the beneficiary'),
  },
  {
    examples: [
      {
        purpose: [
          { code: 1, label: 'Family support' },
          { code: 2, label: 'Salary or payroll' },
        ],
        source: [
          { code: 1, label: 'Salary' },
          { code: 2, label: 'Business income' },
        ],
        relationship: [
          { code: 1, label: 'Self' },
          { code: 2, label: 'Family member' },
        ],
      },
    ],
  },
)

/** The account name inquiry's query: the account a payout would go to. */
export const AccountNameQuerySchema = Type.Object({
  institutionCode: Type.String({
    maxLength: 16,
    description: 'The bank’s NAPAS BIN, as listed by GET /api/v2/fiat/institutions?ccy=VND',
  }),
  bankAcctNum: Type.String({ maxLength: 32, description: 'The account number: 6 to 19 digits' }),
})

/** The holder of a bank account, as the bank names it. */
export const AccountNameSchema = Type.Object(
  {
    institutionCode: Type.String({ description: 'The NAPAS BIN asked' }),
    bankAcctNum: Type.String({ description: 'The account number asked' }),
    name: Type.String({
      description:
        'The holder’s name as the bank gives it: upper case without diacritics (NAPAS), parts replaced by * where the bank masks them. Send the name you expect as destReq.reqDetails.expectedName to have a payout checked against it.',
    }),
  },
  {
    examples: [
      { institutionCode: '970436', bankAcctNum: '0011004567890', name: 'NGUYEN VAN AN' },
      { institutionCode: '970415', bankAcctNum: '1029384757', name: 'TRAN T** HOA' },
    ],
  },
)
