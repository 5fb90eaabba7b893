‡
"serve¼
2
xPlaceholder*
shape
:*
dtype0
F
vVarHandleOp*
shape
:*
dtype0*
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