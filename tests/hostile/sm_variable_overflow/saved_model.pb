
"serveÄ
2
xPlaceholder*
dtype0*
shape
:
N
vVarHandleOp*
dtype0*
shape:€€€€€€€€*
shared_namev
#
rReadVariableOpv*
dtype0

yAddV2xr*
T0*+
serving_default


x
x:0

y
y:0:

v
:2v