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
