from xcviz.clustering._kernel.state cimport State


cdef class CycleGraph:
    # The cycle graph (State) and the memory it owns: freed with the object.
    cdef State S
