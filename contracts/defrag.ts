// What the defragment activity reports to the defrag operation (workflows/defrag-operation.ts).

export interface DefragmentResult {
  member: string;
  /** dbSize and dbSizeInUse before and after, when the member answered its status. */
  before?: { dbSize: number; dbSizeInUse: number };
  after?: { dbSize: number; dbSizeInUse: number };
}
