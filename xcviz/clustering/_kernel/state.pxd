# The kernel's data: the cycle graph's state as one C struct, the row and slot layouts, the refusal codes.
from libc.stdint cimport int32_t, int64_t, uint8_t

cdef enum:
    # per node and direction (successors at 0, predecessors at IN), one row of State.SM (SMW ints): the
    # set's start in the pool, length, capacity, and whether it is hashed: one row (32 bytes) to fetch
    ST = 0
    LN = 1
    CP = 2
    HS = 3
    IN = 4
    SMW = 8
    EMPTY = 0       # a free hash slot; keys are never 0 (that would be the self-edge 0 -> 0)
    HASH_MIN = 16   # a set longer than this has its positions in the hash table
    # columns of the attempt table (one row per contraction tried)
    A_PHASE = 0
    A_SRC = 1
    A_DST = 2
    A_MERGED = 3
    A_CODE = 4
    A_X1 = 5
    A_X2 = 6
    A_PS = 7
    A_PL = 8
    A_COLS = 9
    # why a contraction was refused (C_NONE: merged); phase.REFUSALS names them
    C_NONE = 0
    C_DEVICE = 1
    C_SCOPE = 2
    C_MAXSIZE = 3
    C_CROSS = 4
    C_CYCLE = 5
    C_DEADNESS = 6
    C_RESOURCE = 7
    # State.err: what went wrong (a bug or no memory), raised once the pass returns
    E_STACK = 1
    E_POOL = 2
    E_MEMORY = 3


ctypedef struct State:
    # The cycle graph while it is contracted, and the buffers its searches reuse (sized by new_state).
    int64_t N           # nodes: SOURCE, SINK, the graph inputs, the graph's nodes (then TF's frame nodes)
    int64_t base        # id of the first graph node; 0: a bare table whose sets are all kept (tests)
    int32_t* pool       # every node's successor and predecessor sets, as slices (see SM)
    int32_t* ptmp       # room to pack the pool when its free end runs out (NULL until then)
    int64_t pool_len
    int64_t pool_end    # the pool's free end
    int64_t* HK         # keys of the open-addressing table (EMPTY = free slot), hcap a power of two
    int32_t* HV         # values: a neighbour's position in a hashed set
    int64_t hcap
    int64_t ht_live     # keys in the table
    int32_t* SM         # [N, SMW]: ST, LN, CP, HS of successors, then of predecessors
    int32_t* rank       # Pearce-Kelly topological rank of each node
    uint8_t* visited    # DFS marks, all 0 between steps
    int32_t* parent     # forward-search tree, to recover the blocking path
    int32_t* deltaf     # nodes the forward search reached (fcnt of them)
    int32_t* deltab     # nodes the backward search reached (bcnt of them)
    int64_t fcnt
    int64_t bcnt
    int32_t* stack      # [stack_len, 2] DFS stack of (node, parent)
    int64_t stack_len
    int32_t* path       # the last blocking path (pathlen long)
    int64_t pathlen
    int32_t* rbuf       # the merged ranks a re-ordering hands out
    int32_t* snap       # run_phase's snapshot of a node's successors
    int32_t* sc_out     # contract's copies of the merged node's sets
    int32_t* sc_in
    int64_t x1          # a refusal's details (devices, scopes, size, node)
    int64_t x2
    int err             # E_*: 0 while all is well
